/**
 * ZooKeeper's client protocol on a plain TCP (or TLS) socket: the default transport.
 *
 * One session, one connection at a time. Where the contract of `Transport` is silent, this does
 * what the Java client does (ClientCnxn, ClientCnxnSocketNIO, ZKWatchManager, StaticHostProvider);
 * each such place says so.
 */
import { EventEmitter } from 'node:events';
import * as net from 'node:net';
import * as tls from 'node:tls';
import debug from 'debug';
import { InvalidArgumentError, ZkError, serverError } from '../errors';
import type {
  ACL,
  AddWatchMode,
  ClientIdentity,
  CloseReason,
  CreateMode,
  Op,
  OpResult,
  ReadOp,
  ReadResult,
  Stat,
  Transport,
  TransportEvents,
  TransportOptions,
  WatchEvent,
  WatchEventType,
  Watcher,
  WatcherKind,
} from '../transport/Transport';
import { DEFAULT_MAX_FRAME_BYTES, FrameDecoder, LENGTH_BYTES } from './framing';
import { Chroot, HostList, formatHost, parseConnectString, type HostAddress } from './hosts';
import { JuteReader, JuteWriter } from './jute';
import { readMultiResults, writeMulti, writeMultiRead } from './multi';
import { AddWatchModeCode, CreateFlags, ErrorCode, EventType, MAX_XID, OpCode, WatcherTypeCode, Xid } from './opcodes';
import { ProtocolError } from './ProtocolError';
import {
  AuthPacketRecord,
  ConnectRequestRecord,
  ConnectResponseRecord,
  Create2ResponseRecord,
  CreateRequestRecord,
  CreateTTLRequestRecord,
  GetACLResponseRecord,
  GetAllChildrenNumberResponseRecord,
  GetChildren2ResponseRecord,
  GetDataResponseRecord,
  GetEphemeralsResponseRecord,
  PathRecord,
  PathResponseRecord,
  PathTypeRecord,
  PathVersionRecord,
  PathWatchRecord,
  ReplyHeaderRecord,
  SetACLRequestRecord,
  SetDataRequestRecord,
  SetWatches2Record,
  SetWatchesRecord,
  StatResponseRecord,
  WatcherEventRecord,
  WhoAmIResponseRecord,
  type ConnectResponse,
} from './records';
import { WatchRegistry, watchBatches, type WatchTable } from './watches';

const log = debug('zk-recipes:protocol');

/** The open ACL (world:anyone, all permissions), what the client creates nodes with. */
const OPEN_ACL: readonly ACL[] = Object.freeze([Object.freeze({ perms: 31, scheme: 'world', id: 'anyone' })]);

/** A request's header: the frame's length, the xid (filled in when sent) and the opcode. */
const HEADER_BYTES = LENGTH_BYTES + 8;

/** The Java client pings at least this often, however long the session timeout. */
const MAX_PING_INTERVAL_MS = 10_000;

/** The longest wait between connection attempts (the Java client's spin delay and its reconnect jitter). */
const MAX_RECONNECT_DELAY_MS = 1_000;

/** How long `close()` waits at most for the server to confirm the end of the session. */
const MAX_CLOSE_WAIT_MS = 1_000;

const EVENT_TYPES: Readonly<Record<number, WatchEventType>> = Object.freeze({
  [EventType.nodeCreated]: 'created',
  [EventType.nodeDeleted]: 'deleted',
  [EventType.nodeDataChanged]: 'changed',
  [EventType.nodeChildrenChanged]: 'child',
});

/** A request that sets a watch on `path` (server path): `register` sees the reply's code. */
interface WatchSetting {
  readonly path: string;
  register(err: number): void;
}

/** Why a request did not get its answer: a reply's error code, or the connection's end and its cause. */
class Failure {
  constructor(
    readonly rc: number,
    readonly cause?: unknown,
  ) {}
}

/** A request on its way: waiting for a connection, or sent and waiting for its reply. */
interface Request {
  /** Set when sent (the Java client numbers requests as it sends them). */
  xid: number;
  /** Length, header and body; the xid is written in when sent. */
  readonly frame: Buffer;
  /** Handles the reply: its error code and, when 0, a reader on its body. Throws ProtocolError on bad bytes. */
  readonly reply: (err: number, body: JuteReader) => void;
  readonly fail: (failure: Failure) => void;
}

type Phase = 'waiting' | 'connecting' | 'handshake' | 'connected' | 'closed';

interface Auth {
  readonly scheme: string;
  readonly auth: Buffer;
  /** Callers of addAuth waiting for the server to accept it. */
  waiters: Array<{ resolve: () => void; reject: (failure: Failure) => void }>;
}

function validatePassword(password: unknown): Buffer {
  if (typeof password !== 'string' || !/^[0-9a-fA-F]{32}$/.test(password)) {
    throw new InvalidArgumentError('a session password is 16 bytes as 32 hex digits');
  }
  return Buffer.from(password, 'hex');
}

/** Encodes one request: header room, then the body. */
function frame(opcode: number, xid: number, body?: (w: JuteWriter) => void): Buffer {
  const w = new JuteWriter(HEADER_BYTES);
  body?.(w);
  const bytes = w.bytes();
  bytes.writeInt32BE(bytes.length - LENGTH_BYTES, 0);
  bytes.writeInt32BE(xid, LENGTH_BYTES);
  bytes.writeInt32BE(opcode, LENGTH_BYTES + 4);
  return bytes;
}

/**
 * A Transport speaking ZooKeeper's protocol itself, over `node:net` (or `node:tls` with the `tls`
 * option). Guarantees, beyond the Transport contract:
 * - Requests are pipelined; replies are matched to requests in order. A reply out of order, a frame
 *   over `maxFrameBytes`, a malformed or a truncated frame drops the connection, which is then
 *   established again as after a network error. Nothing the server sends can crash the process.
 * - On a drop, every request waiting for a reply fails with CONNECTIONLOSS, at once.
 * - Watches survive reconnects in the same session: they are set again on the new connection, with
 *   the last zxid seen, so the server fires those whose node changed meanwhile. Their watchers never
 *   hear 'notWatching'.
 * - Only the server declares the session expired ('closed' with 'expired'); the client counts its
 *   own LOST from `lastHeardAt`.
 * - A failed call's error is created in the call's own async frame, so its stack shows the caller.
 * - Sockets are Node's: close-on-exec, never inherited by child processes.
 *
 * Debug output: `DEBUG=zk-recipes:protocol`.
 */
export class ProtocolTransport implements Transport {
  private readonly events = new EventEmitter();
  private readonly hosts: HostList;
  private readonly chroot: Chroot;
  private readonly registry = new WatchRegistry();
  /** Requests that may set a watch, by server path, sent and not yet answered (see removeWatches). */
  private readonly watchesInFlight = new Map<string, number>();
  private readonly maxFrameBytes: number;

  private phase: Phase = 'waiting';
  private closeReason: CloseReason | undefined;
  private closing: Promise<void> | undefined;
  private socket: net.Socket | undefined;
  private host: HostAddress | undefined;
  private decoder: FrameDecoder;
  /** Frames received and not yet handled (see `drain`). */
  private backlog: Buffer[] = [];
  /** A drain of the backlog waits for the next turn of the event loop. */
  private draining = false;
  private timer: NodeJS.Timeout | undefined;
  private corked = false;
  /** Whether a connection has been made yet: the Java client waits a random moment before every later attempt. */
  private everConnected = false;

  private session: { id: bigint; password: Buffer; timeoutMs: number };
  private lastZxid = 0n;
  private xid = 0;
  private connectTimeoutMs: number;
  private readTimeoutMs = 0;
  private attemptStartedAt = 0;
  private lastSendAt = 0;
  private lastRecvAt = 0;

  /** Requests waiting for a connection. */
  private outbox: Request[] = [];
  /** Requests sent, in order, waiting for their replies. */
  private pending: Request[] = [];
  /** Credentials, sent again on every connection of the session. */
  private readonly auths: Auth[] = [];
  /** Credentials sent on this connection, in order, waiting for their replies (xid -4). */
  private authReplies: Auth[] = [];

  lastHeardAt = 0;
  lastConnectError: Error | undefined = undefined;

  constructor(private readonly options: TransportOptions) {
    const { hosts, chroot } = parseConnectString(options.connectString);
    this.hosts = new HostList(hosts);
    this.chroot = new Chroot(chroot);
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    if (!Number.isInteger(this.maxFrameBytes) || this.maxFrameBytes < 16) {
      throw new InvalidArgumentError(`maxFrameBytes must be an integer of at least 16, got ${String(options.maxFrameBytes)}`);
    }
    this.decoder = new FrameDecoder(this.maxFrameBytes);
    if ((options.sessionId === undefined) !== (options.sessionPassword === undefined)) {
      throw new InvalidArgumentError('sessionId and sessionPassword go together');
    }
    this.session = {
      id: options.sessionId ?? 0n,
      // A new session starts with 16 zero bytes, as the Java client's.
      password: options.sessionId === undefined ? Buffer.alloc(16) : validatePassword(options.sessionPassword),
      timeoutMs: 0,
    };
    // Until the server grants a timeout, the asked one divided among the servers (the Java client's rule).
    this.connectTimeoutMs = options.sessionTimeoutMs / this.hosts.size;
    if (log.enabled) log('new transport for %s (servers in order %s)', options.connectString, this.hosts.order.map(formatHost).join(','));
    this.nextAttempt();
  }

  // ---------------------------------------------------------------- the contract's state

  get sessionId(): bigint {
    return this.phase === 'closed' ? 0n : this.session.timeoutMs > 0 ? this.session.id : 0n;
  }

  get sessionPassword(): string {
    return this.session.password.toString('hex');
  }

  get negotiatedSessionTimeoutMs(): number {
    return this.session.timeoutMs;
  }

  get isClosed(): boolean {
    return this.phase === 'closed' || this.closing !== undefined;
  }

  on<E extends keyof TransportEvents>(event: E, listener: TransportEvents[E]): void {
    this.events.on(event, listener);
  }

  off<E extends keyof TransportEvents>(event: E, listener: TransportEvents[E]): void {
    this.events.off(event, listener);
  }

  /** Tells the listeners; one that throws is logged, and neither the others nor the connection suffer. */
  private emit<E extends keyof TransportEvents>(event: E, ...args: Parameters<TransportEvents[E]>): void {
    for (const listener of this.events.listeners(event) as Array<(...a: Parameters<TransportEvents[E]>) => void>) {
      try {
        listener(...args);
      } catch (err) {
        log('session %s: a %s listener threw: %O', this.idHex, event, err);
      }
    }
  }

  private get idHex(): string {
    return `0x${this.session.id.toString(16)}`;
  }

  // ---------------------------------------------------------------- connecting

  /**
   * Picks the next server and connects to it, after a wait where the Java client waits: a random
   * moment before every attempt but the first (so that clients of a restarted server do not all
   * come back at once), and a spin delay once every server has been tried since the last connection.
   * The Java client waits up to a second for each; here each is also at most a tenth of the session
   * timeout, so that a short session is not lost to the waits alone.
   */
  private nextAttempt(): void {
    if (this.phase === 'closed' || this.closing) return;
    const { host, cycled } = this.hosts.next();
    const timeoutMs = this.session.timeoutMs || this.options.sessionTimeoutMs;
    const maxDelayMs = Math.min(MAX_RECONNECT_DELAY_MS, timeoutMs / 10);
    const delayMs = (cycled ? maxDelayMs : 0) + (this.everConnected ? Math.random() * maxDelayMs : 0);
    this.phase = 'waiting';
    this.host = host;
    if (delayMs < 1) {
      this.open(host);
      return;
    }
    log('session %s: next attempt %s in %d ms', this.idHex, formatHost(host), Math.round(delayMs));
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(host), delayMs);
  }

  private open(host: HostAddress): void {
    if (this.phase === 'closed' || this.closing) return;
    this.phase = 'connecting';
    this.attemptStartedAt = performance.now();
    this.lastSendAt = this.attemptStartedAt;
    this.decoder = new FrameDecoder(this.maxFrameBytes);
    log('session %s: connecting to %s%s', this.idHex, formatHost(host), this.options.tls ? ' (TLS)' : '');
    const socket = this.options.tls
      ? tls.connect({ servername: net.isIP(host.host) ? undefined : host.host, ...this.options.tls, host: host.host, port: host.port })
      : net.connect({ host: host.host, port: host.port });
    this.socket = socket;
    socket.setNoDelay(true);
    socket.once(this.options.tls ? 'secureConnect' : 'connect', () => {
      if (socket === this.socket) this.onSocketOpen();
    });
    socket.on('data', (chunk: Buffer) => {
      if (socket === this.socket) this.onData(chunk);
    });
    socket.on('end', () => {
      if (socket !== this.socket) return;
      try {
        this.decoder.end();
        this.drop(new Error(`server ${formatHost(host)} closed the connection`));
      } catch (err) {
        this.drop(err);
      }
    });
    socket.on('error', (err) => {
      if (socket === this.socket) this.drop(err);
    });
    socket.on('close', () => {
      if (socket === this.socket) this.drop(new Error(`connection to ${formatHost(host)} closed`));
    });
    this.arm(this.connectTimeoutMs);
  }

  /** The socket is up: ask for the session (ClientCnxn.primeConnection, whose rest waits for the answer). */
  private onSocketOpen(): void {
    this.phase = 'handshake';
    this.everConnected = true;
    const request = new JuteWriter(LENGTH_BYTES, 64);
    ConnectRequestRecord.write(request, {
      protocolVersion: 0,
      lastZxidSeen: this.lastZxid,
      timeOut: this.options.sessionTimeoutMs,
      sessionId: this.session.id,
      passwd: this.session.password,
      readOnly: false,
    });
    const bytes = request.bytes();
    bytes.writeInt32BE(bytes.length - LENGTH_BYTES, 0);
    this.write(bytes);
  }

  private onData(chunk: Buffer): void {
    this.lastRecvAt = performance.now();
    try {
      this.decoder.push(chunk, (body) => this.backlog.push(body));
    } catch (err) {
      this.drop(err);
      return;
    }
    if (!this.draining) this.drain();
  }

  /**
   * Handles the frames received, in order. A notification that follows a reply waits for a fresh
   * turn of the event loop: the caller that awaited the reply has then resumed (as with separate
   * callbacks), so a watcher never runs before the code that set its watch has seen the reply.
   */
  private drain(): void {
    this.draining = false;
    const socket = this.socket;
    let replied = false;
    try {
      while (this.backlog.length > 0 && socket === this.socket) {
        const body = this.backlog[0];
        if (replied && this.phase === 'connected' && body.length >= 4 && body.readInt32BE(0) === Xid.notification) {
          this.draining = true;
          setImmediate(() => {
            if (socket === this.socket) this.drain();
          });
          return;
        }
        this.backlog.shift();
        // A frame's handler may end the connection (an expired session, a close): the rest is dropped.
        replied = this.onFrame(body) || replied;
      }
    } catch (err) {
      if (socket === this.socket) this.drop(err);
    }
  }

  /** Handles one frame; true when it answered a request. */
  private onFrame(body: Buffer): boolean {
    this.lastHeardAt = performance.now();
    const r = new JuteReader(body);
    if (this.phase === 'handshake') {
      this.onHandshake(ConnectResponseRecord.read(r));
      return false;
    }
    const header = ReplyHeaderRecord.read(r);
    switch (header.xid) {
      case Xid.notification:
        this.onNotification(WatcherEventRecord.read(r), header.zxid);
        return false;
      case Xid.ping:
        return false;
      case Xid.auth:
        this.onAuthReply(header.err);
        return true;
    }
    const request = this.pending.shift();
    if (request === undefined) throw new ProtocolError('unexpectedReply', `a reply with xid ${header.xid} came while no request waited`);
    if (request.xid !== header.xid) {
      const err = new ProtocolError('unexpectedReply', `a reply with xid ${header.xid} came where xid ${request.xid} was next`);
      request.fail(new Failure(ErrorCode.connectionLoss, err));
      throw err;
    }
    if (header.zxid > 0n) this.lastZxid = header.zxid;
    try {
      request.reply(header.err, r);
    } catch (err) {
      request.fail(new Failure(ErrorCode.connectionLoss, err));
      throw err;
    }
    return true;
  }

  /**
   * The server's answer to the ConnectRequest. A session id of 0 or a timeout of 0 means the
   * session expired (only the server says so). Then, as ClientCnxn.primeConnection: credentials,
   * then the watches, then the requests that waited for the connection.
   */
  private onHandshake(response: ConnectResponse): void {
    if (response.timeOut <= 0 || response.sessionId === 0n) {
      log('session %s: the server says it has expired', this.idHex);
      this.end('expired');
      return;
    }
    const host = this.host as HostAddress;
    this.session = { id: response.sessionId, password: response.passwd, timeoutMs: response.timeOut };
    this.readTimeoutMs = (response.timeOut * 2) / 3;
    this.connectTimeoutMs = response.timeOut / this.hosts.size;
    this.hosts.onConnected();
    this.phase = 'connected';
    this.lastConnectError = undefined;
    log('session %s: connected to %s, timeout %d ms%s', this.idHex, formatHost(host), response.timeOut, response.readOnly ? ' (read-only server)' : '');
    this.corkFor(this.socket as net.Socket);
    for (const auth of this.auths) this.sendAuth(auth);
    this.sendSetWatches();
    const waiting = this.outbox;
    this.outbox = [];
    for (const request of waiting) this.send(request);
    this.arm(0);
    this.emit('connected');
  }

  /**
   * The connection is gone (or an attempt failed): every request sent or waiting fails with
   * CONNECTIONLOSS, and the next server is tried with the same session.
   */
  private drop(cause: unknown): void {
    if (this.phase === 'closed' || this.phase === 'waiting') return;
    const wasConnected = this.phase === 'connected';
    const error = cause instanceof Error ? cause : new Error(String(cause));
    const where = this.host ? formatHost(this.host) : '?';
    if (cause instanceof ProtocolError) {
      log('session %s: bad frame from %s (%s): %s; dropping the connection', this.idHex, where, cause.kind, cause.message);
    } else {
      log('session %s: %s %s: %s', this.idHex, wasConnected ? 'connection lost to' : 'could not connect to', where, error.message);
    }
    this.destroySocket();
    if (!wasConnected) this.lastConnectError = this.describeConnectError(error, where);
    this.failAll(new Failure(ErrorCode.connectionLoss, error));
    if (this.closing) {
      // The close was waiting for the server's answer; there will be none.
      this.end('closed');
      return;
    }
    this.phase = 'waiting';
    this.emit('connecting', wasConnected ? error : this.lastConnectError);
    this.nextAttempt();
  }

  private describeConnectError(error: Error, where: string): Error {
    return error.message.includes(where) || error.message.includes(this.host?.host ?? where)
      ? error
      : new Error(`connecting to ${where} failed: ${error.message}`, { cause: error });
  }

  /** The session is over: by expiry, an authentication failure, or our close. */
  private end(reason: CloseReason): void {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    this.closeReason = reason;
    clearTimeout(this.timer);
    this.destroySocket();
    const failure = this.closedFailure();
    this.failAll(failure);
    for (const auth of this.auths) {
      for (const waiter of auth.waiters) waiter.reject(failure);
      auth.waiters = [];
    }
    // The server drops a session's watches with it; the client tells their owners.
    this.registry.clear();
    log('session %s: closed (%s)', this.idHex, reason);
    // Not from inside the call that ended it (a close() made by a listener's own owner, say),
    // but right after it.
    queueMicrotask(() => this.emit('closed', reason));
  }

  private destroySocket(): void {
    const socket = this.socket;
    this.socket = undefined;
    this.corked = false;
    this.backlog = [];
    this.draining = false;
    clearTimeout(this.timer);
    socket?.destroy();
  }

  private failAll(failure: Failure): void {
    const requests = [...this.pending, ...this.outbox];
    this.pending = [];
    this.outbox = [];
    this.authReplies = [];
    for (const request of requests) request.fail(failure);
  }

  // ---------------------------------------------------------------- timers

  /** Arms the one timer after `ms` (0: work out when from the state). */
  private arm(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.onTimer(), Math.max(1, Math.ceil(ms || this.nextDeadline())));
    this.timer.unref();
  }

  private nextDeadline(): number {
    const now = performance.now();
    const idleSend = now - this.lastSendAt;
    return Math.min(this.readTimeoutMs - (now - this.lastRecvAt), this.timeToPing(idleSend));
  }

  /**
   * The Java client's ping rule: ping after half the read timeout (a third of the session timeout)
   * without sending, and at least every 10 seconds. (The Java client also pings a second early once
   * a second has passed, against a late timer; pinging at a third leaves the read timeout a whole
   * third to spare.)
   */
  private timeToPing(idleSendMs: number): number {
    if (idleSendMs > MAX_PING_INTERVAL_MS) return 0;
    return this.readTimeoutMs / 2 - idleSendMs;
  }

  private onTimer(): void {
    const now = performance.now();
    const where = this.host ? formatHost(this.host) : '?';
    if (this.phase === 'connecting' || this.phase === 'handshake') {
      const elapsed = now - this.attemptStartedAt;
      if (elapsed >= this.connectTimeoutMs) {
        this.drop(new Error(`connecting to ${where} timed out after ${Math.round(elapsed)} ms (${this.phase === 'connecting' ? 'no connection' : 'no answer to the handshake'})`));
      } else {
        this.arm(this.connectTimeoutMs - elapsed);
      }
      return;
    }
    if (this.phase !== 'connected') return;
    const idleRecv = now - this.lastRecvAt;
    if (idleRecv >= this.readTimeoutMs) {
      this.drop(new Error(`no answer from ${where} for ${Math.round(idleRecv)} ms (read timeout ${Math.round(this.readTimeoutMs)} ms)`));
      return;
    }
    if (this.timeToPing(now - this.lastSendAt) <= 0) {
      this.write(frame(OpCode.ping, Xid.ping));
    }
    this.arm(0);
  }

  // ---------------------------------------------------------------- sending

  /** Writes a frame. Writes in one turn of the event loop leave in one system call. */
  private write(bytes: Buffer): void {
    const socket = this.socket as net.Socket;
    this.corkFor(socket);
    socket.write(bytes);
    this.lastSendAt = performance.now();
  }

  private corkFor(socket: net.Socket): void {
    if (this.corked) return;
    this.corked = true;
    socket.cork();
    process.nextTick(() => {
      if (socket === this.socket) this.corked = false;
      socket.uncork();
    });
  }

  private send(request: Request): void {
    if (this.phase !== 'connected') {
      this.outbox.push(request);
      return;
    }
    this.xid = this.xid >= MAX_XID ? 1 : this.xid + 1;
    request.xid = this.xid;
    request.frame.writeInt32BE(this.xid, LENGTH_BYTES);
    this.pending.push(request);
    this.write(request.frame);
  }

  private sendAuth(auth: Auth): void {
    this.authReplies.push(auth);
    this.write(frame(OpCode.auth, Xid.auth, (w) => AuthPacketRecord.write(w, { type: 0, scheme: auth.scheme, auth: auth.auth })));
  }

  /**
   * Sets the watches again on a new connection (ClientCnxn.primeConnection): SetWatches, or
   * SetWatches2 when the batch holds persistent watches, in batches of about 128 KB of paths, with
   * the last zxid seen, so the server fires at once the watches whose node changed meanwhile.
   * ClientCnxn names an xid for them (-8), but its socket layer numbers them like any request
   * before they leave; so does this, and the bytes are the Java client's.
   */
  private sendSetWatches(): void {
    for (const batch of watchBatches(this.registry)) {
      const record = { relativeZxid: this.lastZxid, ...batch };
      const count = batch.dataWatches.length + batch.existWatches.length + batch.childWatches.length + batch.persistentWatches.length + batch.persistentRecursiveWatches.length;
      log('session %s: setting %d watches again (zxid 0x%s)', this.idHex, count, this.lastZxid.toString(16));
      this.send({
        xid: 0,
        frame: batch.persistent
          ? frame(OpCode.setWatches2, 0, (w) => SetWatches2Record.write(w, record))
          : frame(OpCode.setWatches, 0, (w) => SetWatchesRecord.write(w, record)),
        reply: (err) => {
          if (err !== 0) log('session %s: setting watches again failed (rc %d)', this.idHex, err);
        },
        fail: () => undefined,
      });
    }
  }

  private onAuthReply(err: number): void {
    const auth = this.authReplies.shift();
    if (err === ErrorCode.authFailed) {
      log('session %s: the server refused the %s credentials', this.idHex, auth?.scheme ?? '?');
      this.end('authFailed');
      return;
    }
    if (auth === undefined) return;
    const waiters = auth.waiters;
    auth.waiters = [];
    for (const waiter of waiters) {
      if (err === 0) waiter.resolve();
      else waiter.reject(new Failure(err));
    }
  }

  private onNotification(event: { type: number; state: number; path: string }, zxid: bigint): void {
    const type = EVENT_TYPES[event.type];
    if (type === undefined) {
      log('session %s: ignoring a notification of type %d on %s', this.idHex, event.type, event.path);
      return;
    }
    const watchers = this.registry.materialize(event.type, event.path);
    if (watchers.size === 0) return;
    // 3.9+ servers send the zxid of the change; older ones -1.
    const watchEvent: WatchEvent = zxid >= 0n ? { type, path: this.chroot.strip(event.path), zxid } : { type, path: this.chroot.strip(event.path) };
    for (const watcher of watchers) this.callWatcher(watcher, watchEvent);
  }

  private callWatcher(watcher: Watcher, event: WatchEvent): void {
    try {
      watcher(event);
    } catch (err) {
      log('session %s: a watcher of %s threw: %O', this.idHex, event.path, err);
    }
  }

  /**
   * Sends a request and resolves with what `decode` makes of a successful reply; rejects with a
   * Failure (the reply's error code, or the connection's end) that the public method turns into a
   * ZkError in its own frame. `onReply` sees every reply's code first (for watch registration).
   */
  private call<T>(opcode: number, body: ((w: JuteWriter) => void) | undefined, decode: (r: JuteReader) => T, watch?: WatchSetting): Promise<T> {
    if (this.isClosed) return Promise.reject(this.closedFailure());
    return new Promise<T>((resolve, reject) => {
      const settled = watch === undefined ? undefined : this.watchSent(watch.path);
      this.send({
        xid: 0,
        frame: frame(opcode, 0, body),
        reply: (err, r) => {
          if (err !== 0) {
            settled?.();
            watch?.register(err);
            reject(new Failure(err));
            return;
          }
          const value = decode(r);
          settled?.();
          watch?.register(0);
          resolve(value);
        },
        fail: (failure) => {
          settled?.();
          reject(failure);
        },
      });
    });
  }

  /** Counts a request that may set a watch on `path` as in flight; the returned function ends it. */
  private watchSent(path: string): () => void {
    this.watchesInFlight.set(path, (this.watchesInFlight.get(path) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.watchesInFlight.get(path) ?? 1) - 1;
      if (left > 0) this.watchesInFlight.set(path, left);
      else this.watchesInFlight.delete(path);
    };
  }

  /** What a call on a closed transport fails with: as the Java client, AUTHFAILED after a refusal, else SESSIONEXPIRED. */
  private closedFailure(): Failure {
    return new Failure(this.closeReason === 'authFailed' ? ErrorCode.authFailed : ErrorCode.sessionExpired);
  }

  /** Awaits a call; a failure becomes a ZkError here, so its stack holds this call's callers. */
  private async run<T>(path: string, call: Promise<T>): Promise<T> {
    try {
      return await call;
    } catch (failure) {
      throw this.toError(failure, path);
    }
  }

  private toError(failure: unknown, path: string): ZkError {
    if (!(failure instanceof Failure)) {
      return failure instanceof ZkError ? failure : new ZkError('SYSTEMERROR', `unexpected failure at ${path}`, { path, cause: failure });
    }
    return serverError(failure.rc, { path, cause: failure.cause });
  }

  private server(path: string): string {
    return this.chroot.prepend(path);
  }

  /** Registers `watcher` when the reply says the server set the watch (the Java client's WatchRegistration). */
  private watchOnReply(watcher: Watcher | undefined, path: string, table: (err: number) => WatchTable | undefined): WatchSetting | undefined {
    if (watcher === undefined) return undefined;
    return {
      path,
      register: (err) => {
        const where = table(err);
        if (where !== undefined) this.registry.add(where, path, watcher);
      },
    };
  }

  // ---------------------------------------------------------------- close

  async close(): Promise<void> {
    if (this.phase === 'closed') return;
    if (this.closing) return this.closing;
    log('session %s: closing', this.idHex);
    if (this.phase !== 'connected') {
      this.closing = Promise.resolve();
      this.end('closed');
      return;
    }
    // Ends the session on the server (its ephemeral nodes go). The server answers by closing the
    // connection once the session is gone; this waits for that, or a short bound.
    const boundMs = Math.min(MAX_CLOSE_WAIT_MS, this.readTimeoutMs);
    this.closing = new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(bound);
        this.end('closed');
        resolve();
      };
      const bound = setTimeout(() => {
        log('session %s: no answer to the close within %d ms', this.idHex, boundMs);
        done();
      }, boundMs);
      this.send({ xid: 0, frame: frame(OpCode.closeSession, 0), reply: done, fail: done });
    });
    return this.closing;
  }

  // ---------------------------------------------------------------- operations

  async create(path: string, data: Buffer, mode: CreateMode, ttlMs?: number): Promise<string> {
    // Only these two opcodes exist for containers and TTL nodes; both answer with the stat too.
    if (mode === 'CONTAINER' || mode.endsWith('_WITH_TTL')) return (await this.create2(path, data, mode, ttlMs)).path;
    return this.run(
      path,
      this.call(
        OpCode.create,
        (w) => CreateRequestRecord.write(w, { path: this.server(path), data, acl: OPEN_ACL, flags: CreateFlags[mode] }),
        (r) => this.chroot.strip(PathResponseRecord.read(r).path),
      ),
    );
  }

  /** A create that returns the new node's stat: create2, or createTTL / createContainer by mode, as the Java client picks. */
  create2(path: string, data: Buffer, mode: CreateMode, ttlMs?: number): Promise<{ path: string; stat: Stat }> {
    const serverPath = this.server(path);
    const flags = CreateFlags[mode];
    const ttl = mode.endsWith('_WITH_TTL');
    return this.run(
      path,
      this.call(
        ttl ? OpCode.createTTL : mode === 'CONTAINER' ? OpCode.createContainer : OpCode.create2,
        (w) =>
          ttl
            ? CreateTTLRequestRecord.write(w, { path: serverPath, data, acl: OPEN_ACL, flags, ttl: BigInt(ttlMs ?? 0) })
            : CreateRequestRecord.write(w, { path: serverPath, data, acl: OPEN_ACL, flags }),
        (r) => {
          const { path: created, stat } = Create2ResponseRecord.read(r);
          return { path: this.chroot.strip(created), stat };
        },
      ),
    );
  }

  async delete(path: string, version: number): Promise<void> {
    await this.run(path, this.call(OpCode.delete, (w) => PathVersionRecord.write(w, { path: this.server(path), version }), () => undefined));
  }

  async exists(path: string, watcher?: Watcher): Promise<Stat | null> {
    const serverPath = this.server(path);
    const found = this.call(
      OpCode.exists,
      (w) => PathWatchRecord.write(w, { path: serverPath, watch: watcher !== undefined }),
      (r) => StatResponseRecord.read(r).stat,
      // A watch on a missing node waits for its creation.
      this.watchOnReply(watcher, serverPath, (err) => (err === 0 ? 'data' : err === ErrorCode.noNode ? 'exist' : undefined)),
    );
    try {
      return await found;
    } catch (failure) {
      if (failure instanceof Failure && failure.rc === ErrorCode.noNode) return null;
      throw this.toError(failure, path);
    }
  }

  getData(path: string, watcher?: Watcher): Promise<{ data: Buffer; stat: Stat }> {
    const serverPath = this.server(path);
    return this.run(
      path,
      this.call(
        OpCode.getData,
        (w) => PathWatchRecord.write(w, { path: serverPath, watch: watcher !== undefined }),
        (r) => GetDataResponseRecord.read(r),
        this.watchOnReply(watcher, serverPath, (err) => (err === 0 ? 'data' : undefined)),
      ),
    );
  }

  setData(path: string, data: Buffer, version: number): Promise<Stat> {
    return this.run(
      path,
      this.call(OpCode.setData, (w) => SetDataRequestRecord.write(w, { path: this.server(path), data, version }), (r) => StatResponseRecord.read(r).stat),
    );
  }

  getChildren(path: string, watcher?: Watcher): Promise<{ children: string[]; stat: Stat }> {
    const serverPath = this.server(path);
    return this.run(
      path,
      this.call(
        OpCode.getChildren2,
        (w) => PathWatchRecord.write(w, { path: serverPath, watch: watcher !== undefined }),
        (r) => GetChildren2ResponseRecord.read(r),
        this.watchOnReply(watcher, serverPath, (err) => (err === 0 ? 'child' : undefined)),
      ),
    );
  }

  async sync(path: string): Promise<void> {
    await this.run(path, this.call(OpCode.sync, (w) => PathRecord.write(w, { path: this.server(path) }), () => undefined));
  }

  getACL(path: string): Promise<{ acl: ACL[]; stat: Stat }> {
    return this.run(path, this.call(OpCode.getACL, (w) => PathRecord.write(w, { path: this.server(path) }), (r) => GetACLResponseRecord.read(r)));
  }

  async setACL(path: string, acl: readonly ACL[], version: number): Promise<void> {
    await this.run(path, this.call(OpCode.setACL, (w) => SetACLRequestRecord.write(w, { path: this.server(path), acl, version }), () => undefined));
  }

  /**
   * Adds credentials to the session; they are sent again on every later connection. Resolves once
   * the server has accepted them. A refusal (AUTHFAILED) ends the session ('closed' with 'authFailed').
   */
  async addAuth(scheme: string, auth: string): Promise<void> {
    try {
      if (this.isClosed) throw this.closedFailure();
      const entry: Auth = { scheme, auth: Buffer.from(auth, 'utf8'), waiters: [] };
      const accepted = new Promise<void>((resolve, reject) => entry.waiters.push({ resolve, reject }));
      this.auths.push(entry);
      // Otherwise it goes out with the next connection's handshake.
      if (this.phase === 'connected') this.sendAuth(entry);
      await accepted;
    } catch (failure) {
      throw this.toError(failure, '/');
    }
  }

  async multi(ops: readonly Op[]): Promise<OpResult[]> {
    const results = await this.run(
      ops[0]?.path ?? '/',
      this.call(
        OpCode.multi,
        (w) => writeMulti(w, ops, OPEN_ACL, (p) => this.server(p)),
        (r) => readMultiResults(r, (p) => this.chroot.strip(p)),
      ),
    );
    return results as OpResult[];
  }

  async multiRead(ops: readonly ReadOp[]): Promise<ReadResult[]> {
    const results = await this.run(
      ops[0]?.path ?? '/',
      this.call(
        OpCode.multiRead,
        (w) => writeMultiRead(w, ops, (p) => this.server(p)),
        (r) => readMultiResults(r, (p) => this.chroot.strip(p)),
      ),
    );
    return results as ReadResult[];
  }

  /**
   * A persistent watch on `path` (and its subtree, recursive). Servers before 3.9 keep one watch
   * mode per path for a connection: adding the other mode on the same path replaces the first on
   * the server (ZOOKEEPER-4466), while both watchers stay here.
   */
  async addWatch(path: string, mode: AddWatchMode, watcher: Watcher): Promise<void> {
    const serverPath = this.server(path);
    await this.run(
      path,
      this.call(
        OpCode.addWatch,
        (w) => PathTypeRecord.write(w, { path: serverPath, type: AddWatchModeCode[mode] }),
        () => undefined,
        this.watchOnReply(watcher, serverPath, (err) => (err !== 0 ? undefined : mode === 'PERSISTENT' ? 'persistent' : 'persistentRecursive')),
      ),
    );
  }

  /**
   * Removes watches. All of a kind go with removeWatches, as in the Java client. One watcher goes
   * with checkWatches in the Java client, and the server's watch stays until it fires (to find no
   * watcher here); here the server's watch goes too (removeWatches) when no other watcher here
   * relies on it and no request that may set it again is in flight, so that code which is done
   * with a watch leaves none behind on the server. Without a connection and with `local`, watchers
   * are removed here at once. Each removed watcher hears 'removed'. Rejects with NOWATCHER when
   * there is no such watcher here, or (without `local`) when the server has no such watch.
   */
  async removeWatches(path: string, kind: WatcherKind, watcher?: Watcher, local = false): Promise<void> {
    const serverPath = this.server(path);
    const removeHere = () => {
      const removed = this.registry.remove(serverPath, kind, watcher);
      if (removed.length === 0) throw new Failure(ErrorCode.noWatcher);
      for (const w of removed) this.callWatcher(w, { type: 'removed', path });
    };
    try {
      if (!this.registry.contains(serverPath, kind, watcher)) throw new Failure(ErrorCode.noWatcher);
      if (local && this.phase !== 'connected') {
        removeHere();
        return;
      }
      let opcode: number = OpCode.removeWatches;
      let type: WatcherKind = kind;
      if (watcher !== undefined) {
        if (this.watchesInFlight.has(serverPath)) opcode = OpCode.checkWatches;
        // Nothing else here on the path: every watch of the connection on it can go (the 'any'
        // type every server version knows).
        else if (!this.registry.othersNeed(serverPath, 'any', watcher)) type = 'any';
        else if ((kind === 'data' || kind === 'children') && !this.registry.othersNeed(serverPath, kind, watcher)) type = kind;
        else opcode = OpCode.checkWatches;
      }
      try {
        await this.call(opcode, (w) => PathTypeRecord.write(w, { path: serverPath, type: WatcherTypeCode[type] }), () => undefined);
      } catch (failure) {
        if (!local || !(failure instanceof Failure)) throw failure;
      }
      removeHere();
    } catch (failure) {
      throw this.toError(failure, path);
    }
  }

  /** Rejects with NOWATCHER unless such a watcher is kept here and the server holds the watch. */
  async checkWatches(path: string, kind: WatcherKind, watcher?: Watcher): Promise<void> {
    const serverPath = this.server(path);
    try {
      if (!this.registry.contains(serverPath, kind, watcher)) throw new Failure(ErrorCode.noWatcher);
      await this.call(OpCode.checkWatches, (w) => PathTypeRecord.write(w, { path: serverPath, type: WatcherTypeCode[kind] }), () => undefined);
    } catch (failure) {
      throw this.toError(failure, path);
    }
  }

  /**
   * The session's ephemeral nodes under `prefixPath` (a prefix of the path's text, as the server
   * matches it). Unlike the Java client, the chroot applies here too.
   */
  getEphemerals(prefixPath: string): Promise<string[]> {
    const prefix = this.chroot.root === undefined ? prefixPath : prefixPath === '/' ? `${this.chroot.root}/` : this.server(prefixPath);
    return this.run(
      prefixPath,
      this.call(
        OpCode.getEphemerals,
        (w) => PathRecord.write(w, { path: prefix }),
        (r) => GetEphemeralsResponseRecord.read(r).ephemerals.map((p) => this.chroot.strip(p)),
      ),
    );
  }

  getAllChildrenNumber(path: string): Promise<number> {
    return this.run(
      path,
      this.call(OpCode.getAllChildrenNumber, (w) => PathRecord.write(w, { path: this.server(path) }), (r) => GetAllChildrenNumberResponseRecord.read(r).totalNumber),
    );
  }

  whoAmI(): Promise<ClientIdentity[]> {
    return this.run('/', this.call(OpCode.whoAmI, undefined, (r) => WhoAmIResponseRecord.read(r).clientInfo));
  }
}

/** Builds a protocol transport: the default `TransportFactory`. */
export function createProtocolTransport(options: TransportOptions): Transport {
  return new ProtocolTransport(options);
}
