/**
 * A fake ZooKeeper server for the protocol's unit tests: it accepts connections on loopback and
 * lets a test read each frame the client sends and answer with any bytes, well-formed or not.
 * `autoReply` answers every request with a plausible success, so a test can script only the
 * moment it is about.
 */
import * as net from 'node:net';
import { FrameDecoder } from '../../src/protocol/framing';
import { JuteReader, JuteWriter, type Schema } from '../../src/protocol/jute';
import { OpCode, Xid } from '../../src/protocol/opcodes';
import {
  ConnectRequestRecord,
  ConnectResponseRecord,
  Create2ResponseRecord,
  ErrorResponseRecord,
  GetACLResponseRecord,
  GetAllChildrenNumberResponseRecord,
  GetChildren2ResponseRecord,
  GetDataResponseRecord,
  GetEphemeralsResponseRecord,
  MultiHeaderRecord,
  PathRecord,
  PathResponseRecord,
  ReplyHeaderRecord,
  StatResponseRecord,
  WatcherEventRecord,
  WhoAmIResponseRecord,
  type ConnectRequest,
} from '../../src/protocol/records';
import type { Stat } from '../../src/transport/Transport';

export const SAMPLE_STAT: Stat = Object.freeze({
  czxid: 1n,
  mzxid: 2n,
  ctime: 3,
  mtime: 4,
  version: 5,
  cversion: 6,
  aversion: 7,
  ephemeralOwner: 0n,
  dataLength: 0,
  numChildren: 0,
  pzxid: 8n,
});

/** The stat of a node just created: one zxid for its creation, last change and children, versions 0. */
export const NEW_NODE_STAT: Stat = Object.freeze({ ...SAMPLE_STAT, mzxid: SAMPLE_STAT.czxid, pzxid: SAMPLE_STAT.czxid, version: 0, cversion: 0, aversion: 0 });

/** A frame the client sent: its bytes after the length, and its header when it is a request. */
export interface ClientFrame {
  readonly body: Buffer;
  readonly xid: number;
  readonly type: number;
  /** A reader positioned after the request header. */
  reader(): JuteReader;
}

export function encodeRecord<T>(schema: Schema<T>, value: T): Buffer {
  const w = new JuteWriter();
  schema.write(w, value);
  return Buffer.from(w.bytes());
}

export function framed(body: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length);
  return Buffer.concat([length, body]);
}

/** One accepted connection, seen from the server. */
export class ScriptedConnection {
  private readonly frames: ClientFrame[] = [];
  private readonly waiters: Array<(frame: ClientFrame) => void> = [];
  private readonly decoder = new FrameDecoder(16 * 1024 * 1024);
  private auto = false;
  /** The zxid of the last reply sent; each reply sent without one gets the next. */
  zxid = 100n;
  /** Paths `autoReply` answers reads of with NONODE. */
  readonly missing = new Set<string>();
  /** Every frame the client sent on this connection, in order (the handshake first). */
  readonly received: ClientFrame[] = [];
  readonly closed: Promise<void>;

  constructor(readonly socket: net.Socket) {
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (chunk: Buffer) =>
      this.decoder.push(chunk, (raw) => {
        const body = Buffer.from(raw);
        const frame: ClientFrame = {
          body,
          xid: body.length >= 8 ? body.readInt32BE(0) : 0,
          type: body.length >= 8 ? body.readInt32BE(4) : 0,
          reader: () => new JuteReader(body, 8),
        };
        this.received.push(frame);
        if (this.auto && this.received.length > 1) {
          this.answer(frame);
          return;
        }
        const waiter = this.waiters.shift();
        if (waiter) waiter(frame);
        else this.frames.push(frame);
      }),
    );
  }

  /** The next frame the client sends (not yet taken), ignoring pings unless asked for. */
  async next(options: { pings?: boolean } = {}): Promise<ClientFrame> {
    for (;;) {
      const frame = this.frames.shift() ?? (await new Promise<ClientFrame>((resolve) => this.waiters.push(resolve)));
      if (options.pings || frame.type !== OpCode.ping || this.received[0] === frame) return frame;
    }
  }

  /** Reads the ConnectRequest and answers it: a session, or (timeOut 0) an expired one. */
  async handshake(answer: { sessionId?: bigint; timeOut?: number; password?: Buffer; readOnlyByte?: boolean } = {}): Promise<ConnectRequest> {
    const frame = await this.next();
    const request = ConnectRequestRecord.read(new JuteReader(frame.body));
    let body = encodeRecord(ConnectResponseRecord, {
      protocolVersion: 0,
      timeOut: answer.timeOut ?? request.timeOut,
      sessionId: answer.sessionId ?? (request.sessionId === 0n ? 0x1234n : request.sessionId),
      passwd: answer.password ?? Buffer.alloc(16, 0xab),
      readOnly: false,
    });
    if (answer.readOnlyByte === false) body = body.subarray(0, body.length - 1);
    this.sendFrame(body);
    return request;
  }

  /** Sends one frame with this body. */
  sendFrame(body: Buffer): void {
    this.socket.write(framed(body));
  }

  /** Sends a reply: header, then the body. */
  reply(xid: number, err = 0, body: Buffer = Buffer.alloc(0), zxid = ++this.zxid): void {
    this.sendFrame(Buffer.concat([encodeRecord(ReplyHeaderRecord, { xid, zxid, err }), body]));
  }

  /** Sends a watch notification (type from EventType). */
  notify(type: number, path: string, zxid = -1n): void {
    this.sendFrame(Buffer.concat([encodeRecord(ReplyHeaderRecord, { xid: Xid.notification, zxid, err: 0 }), encodeRecord(WatcherEventRecord, { type, state: 3, path })]));
  }

  /** From now on, answers every request (and the ones already received) with a plausible success. */
  autoReply(): void {
    this.auto = true;
    for (const frame of this.frames.splice(0)) if (frame !== this.received[0]) this.answer(frame);
  }

  private answer(frame: ClientFrame): void {
    if (frame.type === OpCode.ping) {
      this.reply(Xid.ping, 0, Buffer.alloc(0), -1n);
      return;
    }
    const path = () => (frame.body.length > 12 ? PathRecord.read(frame.reader()).path : '/');
    const reads: readonly number[] = [OpCode.exists, OpCode.getData, OpCode.getChildren2];
    if (reads.includes(frame.type) && this.missing.has(path())) {
      this.reply(frame.xid, -101);
      return;
    }
    let body: Buffer;
    switch (frame.type) {
      case OpCode.create:
      case OpCode.sync:
        body = encodeRecord(PathResponseRecord, { path: path() });
        break;
      case OpCode.create2:
      case OpCode.createTTL:
      case OpCode.createContainer:
        body = encodeRecord(Create2ResponseRecord, { path: path(), stat: NEW_NODE_STAT });
        break;
      case OpCode.exists:
      case OpCode.setData:
      case OpCode.setACL:
        body = encodeRecord(StatResponseRecord, { stat: SAMPLE_STAT });
        break;
      case OpCode.getData:
        body = encodeRecord(GetDataResponseRecord, { data: Buffer.from('data'), stat: SAMPLE_STAT });
        break;
      case OpCode.getChildren2:
        body = encodeRecord(GetChildren2ResponseRecord, { children: ['a', 'b'], stat: SAMPLE_STAT });
        break;
      case OpCode.getACL:
        body = encodeRecord(GetACLResponseRecord, { acl: [{ perms: 31, scheme: 'world', id: 'anyone' }], stat: SAMPLE_STAT });
        break;
      case OpCode.getEphemerals:
        body = encodeRecord(GetEphemeralsResponseRecord, { ephemerals: [] });
        break;
      case OpCode.getAllChildrenNumber:
        body = encodeRecord(GetAllChildrenNumberResponseRecord, { totalNumber: 0 });
        break;
      case OpCode.whoAmI:
        body = encodeRecord(WhoAmIResponseRecord, { clientInfo: [{ scheme: 'ip', id: '127.0.0.1' }] });
        break;
      case OpCode.addWatch:
        body = encodeRecord(ErrorResponseRecord, { err: 0 });
        break;
      case OpCode.multi:
      case OpCode.multiRead:
        body = encodeRecord(MultiHeaderRecord, { type: -1, done: true, err: -1 });
        break;
      default:
        body = Buffer.alloc(0);
    }
    this.reply(frame.xid, 0, body, frame.xid < 0 ? -1n : undefined);
    if (frame.type === OpCode.closeSession) this.socket.end();
  }

  /** Resets the connection (RST). */
  reset(): void {
    this.socket.resetAndDestroy();
  }
}

/** The fake server: `next()` resolves with each connection as the client makes it. */
export class ScriptedServer implements AsyncDisposable {
  private readonly pending: ScriptedConnection[] = [];
  private readonly waiters: Array<(c: ScriptedConnection) => void> = [];
  readonly connections: ScriptedConnection[] = [];
  private refusing = false;

  private constructor(private readonly server: net.Server) {
    server.on('connection', (socket) => {
      if (this.refusing) {
        socket.resetAndDestroy();
        return;
      }
      socket.setNoDelay(true);
      const connection = new ScriptedConnection(socket);
      this.connections.push(connection);
      const waiter = this.waiters.shift();
      if (waiter) waiter(connection);
      else this.pending.push(connection);
    });
  }

  static async start(): Promise<ScriptedServer> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return new ScriptedServer(server);
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  get connectString(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** The next connection the client makes. */
  next(): Promise<ScriptedConnection> {
    const ready = this.pending.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Resets every new connection at once while true. */
  refuse(on: boolean): void {
    this.refusing = on;
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
