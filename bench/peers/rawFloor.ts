/**
 * The raw-socket floor: a ZooKeeper client of a few hundred lines over `node:net`, with its own
 * minimal jute encoder and decoder for exactly the requests a lock sends (connect, create2,
 * getChildren2, getData, delete, ping, closeSession), and nothing else: no retries, no time limits,
 * no validation, no reconnection. It sends what zk-recipes' mutex sends, with the same syscalls:
 * create2 and getChildren2 in one write, then delete; contended, a getData watch on the node ahead
 * and, once it goes, getChildren2 again. What zk-recipes costs the client beyond this is the price
 * of its guarantees and of its layering; the bench reports it as a ratio.
 *
 * For bench/markAB.ts only, the session also has setData, a getData whose reply is handled inside
 * the frame handler (`watchDataInline`) and an optional count of the frames written; the floor's
 * own loops use none of them.
 *
 * Not a client to use: a dropped connection fails every call and the session with it.
 */
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { DEFAULT_CLIENT_OPTIONS } from '../../src';
import { clockUs, HoldCounter } from './clock';
import { queueHandoff, type QueuedHandoff } from './handoffQueue';
import { connectStringOf, type ContendedRun, type HandoffRun, type LockPeer, type Spread } from './types';

export const OP_CREATE2 = 15;
export const OP_DELETE = 2;
export const OP_GET_DATA = 4;
export const OP_SET_DATA = 5;
export const OP_GET_CHILDREN2 = 12;
export const OP_PING = 11;
export const OP_CLOSE = -11;
const XID_WATCH = -1;
const XID_PING = -2;
export const EVENT_NODE_DELETED = 2;
const ERR_NONODE = -101;
const ERR_NODEEXISTS = -110;
const FLAG_PERSISTENT = 0;
export const FLAG_EPHEMERAL_SEQUENTIAL = 3;
/**
 * Not an OpCode: how a `watchDataInline` call's getData reply is decoded (its `resolve` hands the
 * data to the caller's callback inside the frame handler, and NONODE comes to it as null).
 */
const INLINE_GET_DATA = 0x10004;
/** A Stat on the wire: 6 longs and 5 ints. */
const STAT_BYTES = 68;

/** A growable big-endian writer for one frame: the length prefix is filled in by `frame()`. */
class Writer {
  private buf = Buffer.allocUnsafe(256);
  private at = 4;

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }

  int(v: number): this {
    this.room(4);
    this.buf.writeInt32BE(v, this.at);
    this.at += 4;
    return this;
  }

  long0(): this {
    this.room(8);
    this.buf.fill(0, this.at, this.at + 8);
    this.at += 8;
    return this;
  }

  bool(v: boolean): this {
    this.room(1);
    this.buf[this.at++] = v ? 1 : 0;
    return this;
  }

  string(s: string): this {
    const n = Buffer.byteLength(s);
    this.room(4 + n);
    this.buf.writeInt32BE(n, this.at);
    this.buf.write(s, this.at + 4, n, 'utf8');
    this.at += 4 + n;
    return this;
  }

  buffer(b: Buffer): this {
    this.room(4 + b.length);
    this.buf.writeInt32BE(b.length, this.at);
    b.copy(this.buf, this.at + 4);
    this.at += 4 + b.length;
    return this;
  }

  /** The frame, its length prefix filled in. */
  frame(): Buffer {
    this.buf.writeInt32BE(this.at - 4, 0);
    return this.buf.subarray(0, this.at);
  }
}

interface Pending {
  /** The OpCode sent, which says how to decode the reply (or INLINE_GET_DATA). */
  op: number;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

class RawError extends Error {
  constructor(readonly code: number) {
    super(`ZooKeeper error ${code}`);
  }
}

/** One session on one socket. Replies come in request order, so the pending calls are a FIFO. */
export class RawZkSession {
  private readonly pending: Pending[] = [];
  private head = 0;
  private xid = 0;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private connected: ((timeoutMs: number) => void) | undefined;
  private closed: (() => void) | undefined;
  private failure: Error | undefined;
  private pinger: NodeJS.Timeout | undefined;
  /** Watchers by path: called once with the event type. */
  private readonly watchers = new Map<string, (type: number) => void>();

  private constructor(
    private readonly socket: Socket,
    /** Frames written, by OpCode (the connect request aside); undefined, the default: not counted. */
    private readonly framesSent: Map<number, number> | undefined,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => {
      this.fail(new Error('connection closed'));
      this.closed?.();
    });
  }

  /**
   * Opens a session on the first server of `connectString`. With `framesSent`, every request frame
   * the session writes from then on (pings and closeSession included) adds 1 to its OpCode's entry;
   * several sessions may share one map.
   */
  static async open(connectString: string, sessionTimeoutMs: number, framesSent?: Map<number, number>): Promise<RawZkSession> {
    const [host, port] = connectString.split(',')[0].split('/')[0].split(':');
    const socket = connect({ host, port: Number(port) });
    const s = new RawZkSession(socket, framesSent);
    const negotiated = await new Promise<number>((resolve, reject) => {
      s.connected = resolve;
      socket.once('error', reject);
      const w = new Writer().int(0).long0().int(sessionTimeoutMs).long0().buffer(Buffer.alloc(16)).bool(false);
      socket.write(w.frame());
    });
    // Pings keep the idle session alive; a third of the timeout, as the Java client.
    s.pinger = setInterval(() => s.write(new Writer().int(XID_PING).int(OP_PING).frame(), OP_PING), Math.max(1, Math.floor(negotiated / 3)));
    s.pinger.unref();
    return s;
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    if (this.pinger) clearInterval(this.pinger);
    for (let i = this.head; i < this.pending.length; i++) this.pending[i].reject(err);
    this.pending.length = 0;
    this.head = 0;
  }

  private onData(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.buffered < 4) return;
      let buf = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.buffered);
      const len = buf.readInt32BE(0);
      if (this.buffered < 4 + len) {
        this.chunks = [buf];
        return;
      }
      const frame = buf.subarray(4, 4 + len);
      buf = buf.subarray(4 + len);
      this.buffered = buf.length;
      this.chunks = buf.length > 0 ? [buf] : [];
      this.onFrame(frame);
    }
  }

  private onFrame(f: Buffer): void {
    if (this.connected) {
      // ConnectResponse: protocolVersion, timeOut, sessionId, passwd.
      const done = this.connected;
      this.connected = undefined;
      done(f.readInt32BE(4));
      return;
    }
    const xid = f.readInt32BE(0);
    const err = f.readInt32BE(12);
    if (xid === XID_PING) return;
    if (xid === XID_WATCH) {
      // WatcherEvent: type, state, path.
      const type = f.readInt32BE(16);
      const n = f.readInt32BE(24);
      const path = f.toString('utf8', 28, 28 + n);
      const w = this.watchers.get(path);
      if (w) {
        this.watchers.delete(path);
        w(type);
      }
      return;
    }
    const p = this.pending[this.head];
    this.pending[this.head++] = undefined as unknown as Pending;
    if (this.head === this.pending.length) {
      this.pending.length = 0;
      this.head = 0;
    }
    if (err !== 0) {
      if (err === ERR_NONODE && p.op === INLINE_GET_DATA) p.resolve(null);
      else p.reject(new RawError(err));
      return;
    }
    switch (p.op) {
      case OP_CREATE2: {
        const n = f.readInt32BE(16);
        p.resolve(f.toString('utf8', 20, 20 + n));
        break;
      }
      case OP_GET_CHILDREN2: {
        const count = f.readInt32BE(16);
        const children = new Array<string>(count);
        let at = 20;
        for (let i = 0; i < count; i++) {
          const n = f.readInt32BE(at);
          children[i] = f.toString('utf8', at + 4, at + 4 + n);
          at += 4 + n;
        }
        p.resolve(children);
        break;
      }
      case OP_GET_DATA: {
        const n = f.readInt32BE(16);
        p.resolve(n < 0 ? null : f.subarray(20, 20 + n + STAT_BYTES));
        break;
      }
      case INLINE_GET_DATA: {
        // The data alone, a view into the read buffer (a null data comes as an empty buffer).
        const n = f.readInt32BE(16);
        p.resolve(f.subarray(20, 20 + Math.max(0, n)));
        break;
      }
      default:
        p.resolve(undefined);
    }
  }

  private call<T>(op: number): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ op, resolve: resolve as (v: unknown) => void, reject });
    });
  }

  private header(op: number): Writer {
    this.xid = this.xid === 0x7fffffff ? 1 : this.xid + 1;
    return new Writer().int(this.xid).int(op);
  }

  /** Writes `frames`: one request, or two (createAndList), counted in `framesSent` when it is set. */
  private write(frames: Buffer, op: number, secondOp?: number): void {
    const sent = this.framesSent;
    if (sent !== undefined) {
      sent.set(op, (sent.get(op) ?? 0) + 1);
      if (secondOp !== undefined) sent.set(secondOp, (sent.get(secondOp) ?? 0) + 1);
    }
    this.socket.write(frames);
  }

  private create2Frame(path: string, data: Buffer, flags: number): Writer {
    // The open ACL: one entry, every permission, world:anyone.
    return this.header(OP_CREATE2).string(path).buffer(data).int(1).int(31).string('world').string('anyone').int(flags);
  }

  create(path: string, data: Buffer, flags: number): Promise<string> {
    const w = this.create2Frame(path, data, flags);
    const p = this.call<string>(OP_CREATE2);
    this.write(w.frame(), OP_CREATE2);
    return p;
  }

  /** create2 and getChildren2 of `parent` in one write, as the lock sends them. */
  createAndList(path: string, data: Buffer, flags: number, parent: string): Promise<[string, string[]]> {
    const a = this.create2Frame(path, data, flags);
    const b = this.header(OP_GET_CHILDREN2).string(parent).bool(false);
    const created = this.call<string>(OP_CREATE2);
    const listed = this.call<string[]>(OP_GET_CHILDREN2);
    this.write(Buffer.concat([a.frame(), b.frame()]), OP_CREATE2, OP_GET_CHILDREN2);
    return Promise.all([created, listed]);
  }

  getChildren(parent: string): Promise<string[]> {
    const w = this.header(OP_GET_CHILDREN2).string(parent).bool(false);
    const p = this.call<string[]>(OP_GET_CHILDREN2);
    this.write(w.frame(), OP_GET_CHILDREN2);
    return p;
  }

  /** getData with a watch; null when the node is gone (the watch is then not set). */
  async watchData(path: string, onEvent: (type: number) => void): Promise<Buffer | null> {
    const w = this.header(OP_GET_DATA).string(path).bool(true);
    this.watchers.set(path, onEvent);
    const p = this.call<Buffer | null>(OP_GET_DATA);
    this.write(w.frame(), OP_GET_DATA);
    try {
      return await p;
    } catch (err) {
      if (err instanceof RawError && err.code === ERR_NONODE) {
        this.watchers.delete(path);
        return null;
      }
      throw err;
    }
  }

  /**
   * getData with a watch, the reply handed to `onReply` inside the frame handler: the node's data
   * (a view into the read buffer, valid during the call only; the Stat left out), or null when the
   * node is gone (the watch is then not set). A watch event that came in the same socket read,
   * after the reply, is handled once `onReply` has returned; `watchData`'s promise, by contrast,
   * settles in a microtask, after such an event. The promise returned resolves once `onReply` has
   * run, and rejects on any other error (or if `onReply` throws).
   */
  watchDataInline(path: string, onEvent: (type: number) => void, onReply: (data: Buffer | null) => void): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const w = this.header(OP_GET_DATA).string(path).bool(true);
    this.watchers.set(path, onEvent);
    const p = new Promise<void>((resolve, reject) => {
      const replied = (data: unknown) => {
        if (data === null && this.watchers.get(path) === onEvent) this.watchers.delete(path);
        try {
          onReply(data as Buffer | null);
        } catch (err) {
          reject(err as Error);
          return;
        }
        resolve();
      };
      this.pending.push({ op: INLINE_GET_DATA, resolve: replied, reject });
    });
    this.write(w.frame(), OP_GET_DATA);
    return p;
  }

  /** setData; the reply's Stat is not decoded. */
  setData(path: string, data: Buffer, version = -1): Promise<void> {
    const w = this.header(OP_SET_DATA).string(path).buffer(data).int(version);
    const p = this.call<void>(OP_SET_DATA);
    this.write(w.frame(), OP_SET_DATA);
    return p;
  }

  delete(path: string): Promise<void> {
    const w = this.header(OP_DELETE).string(path).int(-1);
    const p = this.call<void>(OP_DELETE);
    this.write(w.frame(), OP_DELETE);
    return p;
  }

  /** Creates `path` and its ancestors as persistent nodes where missing. */
  async ensurePath(path: string): Promise<void> {
    let at = '';
    for (const part of path.split('/').filter(Boolean)) {
      at += `/${part}`;
      await this.create(at, Buffer.alloc(0), FLAG_PERSISTENT).catch((err: unknown) => {
        if (!(err instanceof RawError && err.code === ERR_NODEEXISTS)) throw err;
      });
    }
  }

  /** Ends the session (closeSession), then the socket. */
  async close(): Promise<void> {
    if (this.pinger) clearInterval(this.pinger);
    if (!this.failure) await this.sendBare(OP_CLOSE).catch(() => undefined);
    await new Promise<void>((resolve) => {
      if (this.socket.destroyed) return resolve();
      this.closed = resolve;
      this.socket.end();
    });
  }

  /** Sends a request with no body (closeSession) and waits for its reply. */
  private sendBare(op: number): Promise<void> {
    const w = this.header(op);
    const p = this.call<void>(op);
    this.write(w.frame(), op);
    return p;
  }

  /**
   * Takes the mutex under `parent`: our protected EPHEMERAL_SEQUENTIAL node and the listing in
   * one write; while a node sorts before ours, a getData watch on the one just ahead, and once it
   * goes, the listing again. Resolves with our node's path.
   */
  async acquire(parent: string, data: Buffer): Promise<string> {
    const [ours, first] = await this.createAndList(`${parent}/_c_${randomUUID()}-lock-`, data, FLAG_EPHEMERAL_SEQUENTIAL, parent);
    const ourName = ours.slice(parent.length + 1);
    let children = first;
    for (;;) {
      const ahead = nodeAhead(children, ourName);
      if (ahead === undefined) return ours;
      const deleted = new Promise<void>((resolve) => {
        const path = `${parent}/${ahead}`;
        const onEvent = (type: number) => {
          if (type === EVENT_NODE_DELETED) resolve();
          else void this.watchData(path, onEvent).then((d) => d === null && resolve());
        };
        void this.watchData(path, onEvent).then((d) => d === null && resolve());
      });
      await deleted;
      children = await this.getChildren(parent);
    }
  }
}

/** The lock node just before ours in sequence order, or undefined when ours is first. */
export function nodeAhead(children: readonly string[], ours: string): string | undefined {
  const seq = (name: string) => name.slice(name.length - 10);
  const mine = seq(ours);
  let ahead: string | undefined;
  let aheadSeq = '';
  for (const c of children) {
    const s = seq(c);
    if (s < mine && s > aheadSeq) {
      ahead = c;
      aheadSeq = s;
    }
  }
  return ahead;
}

/** The raw floor as a bench library: one session for `uncontended`, N for `contended`. */
export class RawFloorClient {
  readonly label = 'floor: raw socket, own jute codec';
  private sessions: RawZkSession[] = [];
  private readonly ensured = new Set<string>();
  private queued: QueuedHandoff | undefined;

  constructor(
    /** Session k connects to `connectStringOf(spread, k)`. */
    private readonly spread: Spread,
    private readonly sessionTimeoutMs: number,
  ) {}

  async open(sessions = 1): Promise<void> {
    await this.close();
    this.sessions = await Promise.all(Array.from({ length: sessions }, (_, k) => RawZkSession.open(connectStringOf(this.spread, k), this.sessionTimeoutMs)));
  }

  async close(): Promise<void> {
    const open = this.sessions;
    this.sessions = [];
    await Promise.all(open.map((s) => s.close()));
  }

  private async ensure(parent: string): Promise<void> {
    if (this.ensured.has(parent)) return;
    await this.sessions[0].ensurePath(parent);
    this.ensured.add(parent);
  }

  /**
   * The round trip of a holder's delete, timed `perSession` times in each open session in turn
   * (an ephemeral sequential node under `parent` created, then deleted): the µs of each. No
   * hand-off can be faster: the next holder may take the lock only once the delete is committed,
   * and learns of it from the delete's reply or from a watch event, neither of which leaves a
   * member before the commit.
   */
  async deleteRoundTrips(parent: string, perSession: number): Promise<number[]> {
    const data = DEFAULT_CLIENT_OPTIONS.defaultData;
    await this.ensure(parent);
    const lat: number[] = [];
    for (const s of this.sessions) {
      for (let i = 0; i < perSession; i++) {
        const node = await s.create(`${parent}/n-`, data, FLAG_EPHEMERAL_SEQUENTIAL);
        const t0 = clockUs();
        await s.delete(node);
        lat.push(clockUs() - t0);
      }
    }
    return lat;
  }

  /** Acquire+release pairs on session 0, one after another: the µs of each. */
  async uncontended(parent: string, iterations: number): Promise<number[]> {
    const s = this.sessions[0];
    const data = DEFAULT_CLIENT_OPTIONS.defaultData;
    await this.ensure(parent);
    const lat: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = clockUs();
      const ours = await s.acquire(parent, data);
      await s.delete(ours);
      lat.push(clockUs() - t0);
    }
    return lat;
  }

  /** One acquire/release loop per open session on one mutex, for `durationMs`, checked as every library's. */
  async contended(parent: string, durationMs: number): Promise<ContendedRun> {
    const data = DEFAULT_CLIENT_OPTIONS.defaultData;
    await this.ensure(parent);
    const counter = new HoldCounter();
    const counts = new Array<number>(this.sessions.length).fill(0);
    const holds: Array<[number, number]> = [];
    const t0 = clockUs();
    const deadline = t0 + durationMs * 1000;
    await Promise.all(
      this.sessions.map(async (s, k) => {
        while (clockUs() < deadline) {
          const ours = await s.acquire(parent, data);
          counter.enter();
          const start = clockUs();
          const end = clockUs();
          counter.leave();
          await s.delete(ours);
          holds.push([start, end]);
          counts[k]++;
        }
      }),
    );
    return { counts, elapsedMs: (clockUs() - t0) / 1000, violations: counter.violations, holds };
  }

  /** The hand-off queue: the holder on session 0, waiter k on session (k - 1) mod n, as every library's. */
  async handoffQueue(parent: string, waiters: number, holdMs: number): Promise<void> {
    if (this.queued) throw new Error('a hand-off is already queued');
    const data = DEFAULT_CLIENT_OPTIONS.defaultData;
    await this.ensure(parent);
    this.queued = await queueHandoff(waiters, holdMs, async (k) => {
      const s = this.sessions[k === 0 ? 0 : (k - 1) % this.sessions.length];
      const ours = await s.acquire(parent, data);
      return () => s.delete(ours);
    });
  }

  async handoffRun(): Promise<HandoffRun> {
    const q = this.queued;
    if (!q) throw new Error('no hand-off is queued');
    this.queued = undefined;
    return q.run();
  }
}

/** The raw floor as a LockPeer for the scenarios that loop over peers (contended, handoff): only the mutex. */
export function rawFloorPeer(spread: Spread, sessionTimeoutMs: number): LockPeer {
  const client = new RawFloorClient(spread, sessionTimeoutMs);
  return {
    id: 'floor-raw',
    label: client.label,
    versions: {},
    usesZooKeeper: true,
    open: (sessions) => client.open(sessions),
    closeSessions: () => client.close(),
    uncontended: (path, iterations) => client.uncontended(path, iterations),
    contended: (path, durationMs) => client.contended(path, durationMs),
    handoffQueue: (path, waiters, holdMs) => client.handoffQueue(path, waiters, holdMs),
    handoffRun: () => client.handoffRun(),
    shutdown: () => client.close(),
  };
}
