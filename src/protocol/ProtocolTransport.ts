/**
 * ZooKeeper's client protocol on a plain TCP (or TLS) socket: the default transport. This file
 * holds the Transport contract's operations: each encodes its request (by hand for the hot ones,
 * codec.ts; by its schema record otherwise), sends it on the session (ProtocolConnection.ts) and
 * decodes the reply.
 *
 * Where the contract of `Transport` is silent, this does what the Java client does; each such
 * place says so.
 */
import { inspect, type InspectOptions } from 'node:util';
import { ZkError, serverError } from '../errors';
import type {
  ACL,
  AddWatchMode,
  ClientIdentity,
  CreateMode,
  Op,
  OpResult,
  ReadOp,
  ReadResult,
  Stat,
  Transport,
  TransportEvents,
  TransportOptions,
  Watcher,
  WatcherKind,
} from '../transport/Transport';
import { CONFIG_NODE } from '../transport/Transport';
import {
  encodeCreate,
  encodePathVersion,
  encodePathWatch,
  encodeSetData,
  readCreate2Response,
  readGetChildren2Response,
  readGetDataResponse,
  readStat,
} from './codec';
import { parseConnectString, type Chroot } from './hosts';
import type { JuteReader, JuteWriter } from './jute';
import { readMultiResults, writeMulti, writeMultiRead } from './multi';
import { AddWatchModeCode, CreateFlags, ErrorCode, OpCode, WatcherTypeCode } from './opcodes';
import { ProtocolConnection } from './ProtocolConnection';
import { ProtocolError } from './ProtocolError';
import {
  CreateTTLRequestRecord,
  GetACLResponseRecord,
  GetAllChildrenNumberResponseRecord,
  GetEphemeralsResponseRecord,
  PathRecord,
  PathTypeRecord,
  SetACLRequestRecord,
  WhoAmIResponseRecord,
} from './records';
import { Failure, frame, type Request } from './requests';
import type { WatchTable } from './watches';

/** Where a reply's code says the server set a request's watch; undefined: it set none. */
type WatchTableOf = (err: number) => WatchTable | undefined;

const DATA_WATCH: WatchTableOf = (err) => (err === 0 ? 'data' : undefined);
const CHILD_WATCH: WatchTableOf = (err) => (err === 0 ? 'child' : undefined);
// A watch on a missing node waits for its creation.
const EXISTS_WATCH: WatchTableOf = (err) => (err === 0 ? 'data' : err === ErrorCode.noNode ? 'exist' : undefined);
const PERSISTENT_WATCH: WatchTableOf = (err) => (err === 0 ? 'persistent' : undefined);
const PERSISTENT_RECURSIVE_WATCH: WatchTableOf = (err) => (err === 0 ? 'persistentRecursive' : undefined);

/**
 * A request that may set a watch on `path` (a server path): counted as in flight from its send to
 * its end (see `ProtocolTransport.watchesInFlight`), and registering its watcher where the reply's
 * code says the server set it (the Java client's WatchRegistration). One object per request.
 */
class WatchSetting {
  private ended = false;

  constructor(
    private readonly transport: ProtocolTransport,
    readonly path: string,
    private readonly watcher: Watcher,
    private readonly table: WatchTableOf,
  ) {}

  /** The request ended with `err` (0: its reply was read); undefined: it got no reply. */
  end(err: number | undefined): void {
    if (this.ended) return;
    this.ended = true;
    this.transport.watchEnded(this.path);
    const where = err === undefined ? undefined : this.table(err);
    if (where !== undefined) this.transport.registerWatch(where, this.path, this.watcher);
  }
}

/**
 * A request sent and waiting for its reply: how it settles, as one object rather than a record
 * with a closure for each way it may end (every request of every recipe passes through here).
 */
class PendingRequest<T> implements Request {
  xid = 0;

  constructor(
    readonly frame: Buffer,
    private readonly decode: (r: JuteReader) => T,
    /** Sees every reply's code first (for watch registration), and the request's end. */
    private readonly watch: WatchSetting | undefined,
    private readonly resolve: (value: T) => void,
    private readonly reject: (reason: unknown) => void,
  ) {}

  reply(err: number, r: JuteReader): void {
    if (err !== 0) {
      this.watch?.end(err);
      this.reject(new Failure(err));
      return;
    }
    const unread = r.remaining;
    const value = this.decode(r);
    // A record read must fill its reply exactly: bytes left over mean a length inside it was
    // wrong, and the stream with it. (Replies whose body is not read, such as sync's, are not checked.)
    if (r.remaining !== 0 && r.remaining !== unread) throw new ProtocolError('malformed', `a reply has ${r.remaining} bytes after its record`);
    this.watch?.end(0);
    this.resolve(value);
  }

  fail(failure: Failure): void {
    this.watch?.end(undefined);
    this.reject(failure);
  }
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
  private readonly connection: ProtocolConnection;
  private readonly chroot: Chroot;
  /** Requests that may set a watch, by server path, sent and not yet answered (see removeWatches); made with the first. */
  private watchesInFlight: Map<string, number> | undefined;

  constructor(options: TransportOptions) {
    this.connection = new ProtocolConnection(options);
    this.chroot = this.connection.chroot;
  }

  /** What `util.inspect` shows: the connection's summary, with no credentials, TLS key or session password. */
  [inspect.custom](depth: number, options: InspectOptions, show: typeof inspect = inspect): string {
    return `ProtocolTransport { ${this.connection[inspect.custom](depth, options, show)} }`;
  }

  // ---------------------------------------------------------------- the contract's state

  get sessionId(): bigint {
    return this.connection.sessionId;
  }

  get sessionPassword(): string {
    return this.connection.sessionPassword;
  }

  get negotiatedSessionTimeoutMs(): number {
    return this.connection.negotiatedSessionTimeoutMs;
  }

  get isClosed(): boolean {
    return this.connection.isClosed;
  }

  get lastHeardAt(): number {
    return this.connection.lastHeardAt;
  }

  get lastConnectError(): Error | undefined {
    return this.connection.lastConnectError;
  }

  /** Every create request carries its node's ACL. */
  get aclOnCreate(): boolean {
    return true;
  }

  on<E extends keyof TransportEvents>(event: E, listener: TransportEvents[E]): void {
    this.connection.on(event, listener);
  }

  off<E extends keyof TransportEvents>(event: E, listener: TransportEvents[E]): void {
    this.connection.off(event, listener);
  }

  /** Ends the session on the server, waiting a short bound for its answer. */
  close(): Promise<void> {
    return this.connection.close();
  }

  batch<T>(send: () => T): T {
    return this.connection.batch(send);
  }

  // ---------------------------------------------------------------- requests

  /** Sends a request whose body the schema records write (see `request`). */
  private call<T>(opcode: number, body: ((w: JuteWriter) => void) | undefined, decode: (r: JuteReader) => T, watch?: WatchSetting): Promise<T> {
    return this.request(() => frame(opcode, 0, body), decode, watch);
  }

  /**
   * Sends the request `encode` frames (encoded only once the session is known open, and inside the
   * promise, so a bad argument rejects rather than throws) and resolves with what `decode` makes of
   * a successful reply; rejects with a Failure (the reply's error code, or the connection's end)
   * that the public method turns into a ZkError in its own frame. `watch` sees every reply's code
   * first (for watch registration).
   */
  private request<T>(encode: () => Buffer, decode: (r: JuteReader) => T, watch?: WatchSetting): Promise<T> {
    if (this.isClosed) return Promise.reject(this.connection.closedFailure());
    return new Promise<T>((resolve, reject) => {
      const bytes = encode();
      // Counted once it is sure to be sent: a request that fails to encode never ends.
      if (watch !== undefined) this.watchStarted(watch.path);
      this.connection.send(new PendingRequest(bytes, decode, watch, resolve, reject));
    });
  }

  /** Counts a request that may set a watch on `path` as in flight, until `watchEnded`. */
  private watchStarted(path: string): void {
    const inFlight = (this.watchesInFlight ??= new Map());
    inFlight.set(path, (inFlight.get(path) ?? 0) + 1);
  }

  /** @internal A request counted by `watchStarted` ended. */
  watchEnded(path: string): void {
    const inFlight = this.watchesInFlight;
    if (inFlight === undefined) return;
    const left = (inFlight.get(path) ?? 1) - 1;
    if (left > 0) inFlight.set(path, left);
    else inFlight.delete(path);
  }

  /** @internal Registers the watcher of a request whose reply says the server set its watch. */
  registerWatch(where: WatchTable, path: string, watcher: Watcher): void {
    this.connection.registry.add(where, path, watcher);
  }

  /**
   * A call whose failure becomes a ZkError here, in a reaction to the call's promise: its stack
   * holds this call's callers (V8 follows the promise this returns to the async functions that
   * await it), with no async frame of its own.
   */
  private run<T>(path: string, call: Promise<T>): Promise<T> {
    return call.then(undefined, (failure: unknown) => {
      throw this.toError(failure, path);
    });
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

  /** The watch setting of a request with `watcher`; none without one. */
  private watchOnReply(watcher: Watcher | undefined, path: string, table: WatchTableOf): WatchSetting | undefined {
    return watcher === undefined ? undefined : new WatchSetting(this, path, watcher, table);
  }

  // ---------------------------------------------------------------- operations

  async create(path: string, data: Buffer, mode: CreateMode, acl: readonly ACL[], ttlMs?: number): Promise<string> {
    // Only these two opcodes exist for containers and TTL nodes; both answer with the stat too.
    if (mode === 'CONTAINER' || mode.endsWith('_WITH_TTL')) return (await this.create2(path, data, mode, acl, ttlMs)).path;
    return this.run(
      path,
      this.request(
        () => encodeCreate(OpCode.create, this.server(path), data, acl, CreateFlags[mode]),
        (r) => this.chroot.strip(r.string()),
      ),
    );
  }

  /** A create that returns the new node's stat: create2, or createTTL / createContainer by mode, as the Java client picks. */
  create2(path: string, data: Buffer, mode: CreateMode, acl: readonly ACL[], ttlMs?: number): Promise<{ path: string; stat: Stat }> {
    const serverPath = this.server(path);
    const flags = CreateFlags[mode];
    const ttl = mode.endsWith('_WITH_TTL');
    return this.run(
      path,
      this.request(
        () =>
          ttl
            ? frame(OpCode.createTTL, 0, (w) => CreateTTLRequestRecord.write(w, { path: serverPath, data, acl, flags, ttl: BigInt(ttlMs ?? 0) }))
            : encodeCreate(mode === 'CONTAINER' ? OpCode.createContainer : OpCode.create2, serverPath, data, acl, flags),
        (r) => {
          const reply = readCreate2Response(r);
          checkNewNode(reply.stat);
          return { path: this.chroot.strip(reply.path), stat: reply.stat };
        },
      ),
    );
  }

  delete(path: string, version: number): Promise<void> {
    return this.run(path, this.request(() => encodePathVersion(OpCode.delete, this.server(path), version), noReply));
  }

  exists(path: string, watcher?: Watcher): Promise<Stat | null> {
    const serverPath = this.server(path);
    const found: Promise<Stat | null> = this.request(
      () => encodePathWatch(OpCode.exists, serverPath, watcher !== undefined),
      readStat,
      // A watch on a missing node waits for its creation.
      this.watchOnReply(watcher, serverPath, EXISTS_WATCH),
    );
    return found.then(undefined, (failure: unknown) => {
      if (failure instanceof Failure && failure.rc === ErrorCode.noNode) return null;
      throw this.toError(failure, path);
    });
  }

  getData(path: string, watcher?: Watcher): Promise<{ data: Buffer; stat: Stat }> {
    return this.readData(path, this.server(path), watcher);
  }

  /** The ensemble's configuration node, whatever the chroot, as the Java client's getConfig. */
  getConfig(watcher?: Watcher): Promise<{ data: Buffer; stat: Stat }> {
    return this.readData(CONFIG_NODE, CONFIG_NODE, watcher);
  }

  /** See ProtocolConnection.updateHosts; `hosts` is "host:port,…", any chroot ignored. */
  updateServers(hosts: string): void {
    if (!this.isClosed) this.connection.updateHosts(parseConnectString(hosts).hosts);
  }

  private readData(path: string, serverPath: string, watcher: Watcher | undefined): Promise<{ data: Buffer; stat: Stat }> {
    return this.run(
      path,
      this.request(
        () => encodePathWatch(OpCode.getData, serverPath, watcher !== undefined),
        readGetDataResponse,
        this.watchOnReply(watcher, serverPath, DATA_WATCH),
      ),
    );
  }

  setData(path: string, data: Buffer, version: number): Promise<Stat> {
    return this.run(
      path,
      this.request(() => encodeSetData(OpCode.setData, this.server(path), data, version), readStat),
    );
  }

  getChildren(path: string, watcher?: Watcher): Promise<{ children: string[]; stat: Stat }> {
    const serverPath = this.server(path);
    return this.run(
      path,
      this.request(
        () => encodePathWatch(OpCode.getChildren2, serverPath, watcher !== undefined),
        readGetChildren2Response,
        this.watchOnReply(watcher, serverPath, CHILD_WATCH),
      ),
    );
  }

  async sync(path: string): Promise<void> {
    await this.run(path, this.call(OpCode.sync, (w) => PathRecord.write(w, { path: this.server(path) }), noReply));
  }

  getACL(path: string): Promise<{ acl: ACL[]; stat: Stat }> {
    return this.run(path, this.call(OpCode.getACL, (w) => PathRecord.write(w, { path: this.server(path) }), (r) => GetACLResponseRecord.read(r)));
  }

  async setACL(path: string, acl: readonly ACL[], version: number): Promise<void> {
    await this.run(path, this.call(OpCode.setACL, (w) => SetACLRequestRecord.write(w, { path: this.server(path), acl, version }), noReply));
  }

  /**
   * Adds credentials to the session; they are sent again on every later connection. Resolves once
   * the server has accepted them. A refusal (AUTHFAILED) ends the session ('closed' with 'authFailed').
   */
  async addAuth(scheme: string, auth: string): Promise<void> {
    try {
      if (this.isClosed) throw this.connection.closedFailure();
      await this.connection.addAuth(scheme, auth);
    } catch (failure) {
      throw this.toError(failure, '/');
    }
  }

  async multi(ops: readonly Op[]): Promise<OpResult[]> {
    const results = await this.run(
      ops[0]?.path ?? '/',
      this.call(
        OpCode.multi,
        (w) => writeMulti(w, ops, (p) => this.server(p)),
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
        noReply,
        this.watchOnReply(watcher, serverPath, mode === 'PERSISTENT' ? PERSISTENT_WATCH : PERSISTENT_RECURSIVE_WATCH),
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
      const removed = this.connection.registry.remove(serverPath, kind, watcher);
      if (removed.length === 0) throw new Failure(ErrorCode.noWatcher);
      for (const w of removed) this.connection.callWatcher(w, { type: 'removed', path });
    };
    try {
      if (!this.connection.registry.contains(serverPath, kind, watcher)) throw new Failure(ErrorCode.noWatcher);
      if (local && !this.connection.isConnected) {
        removeHere();
        return;
      }
      let opcode: number = OpCode.removeWatches;
      let type: WatcherKind = kind;
      if (watcher !== undefined) {
        if (this.watchesInFlight?.has(serverPath)) opcode = OpCode.checkWatches;
        // Nothing else here on the path: every watch of the connection on it can go (the 'any'
        // type every server version knows).
        else if (!this.connection.registry.othersNeed(serverPath, 'any', watcher)) type = 'any';
        else if ((kind === 'data' || kind === 'children') && !this.connection.registry.othersNeed(serverPath, kind, watcher)) type = kind;
        else opcode = OpCode.checkWatches;
      }
      try {
        await this.call(opcode, (w) => PathTypeRecord.write(w, { path: serverPath, type: WatcherTypeCode[type] }), noReply);
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
      if (!this.connection.registry.contains(serverPath, kind, watcher)) throw new Failure(ErrorCode.noWatcher);
      await this.call(OpCode.checkWatches, (w) => PathTypeRecord.write(w, { path: serverPath, type: WatcherTypeCode[kind] }), noReply);
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

/**
 * A node just created has one zxid for its creation, its last change and its children's last
 * change, and every version 0. A stat that says otherwise was damaged on the way: its czxid is
 * the fencing token of a lock, so it is not handed on (see ProtocolError).
 */
function checkNewNode(stat: Stat): void {
  if (stat.mzxid !== stat.czxid || stat.pzxid !== stat.czxid || stat.version !== 0 || stat.cversion !== 0 || stat.aversion !== 0) {
    throw new ProtocolError('malformed', `the stat of a node just created has czxid 0x${stat.czxid.toString(16)}, mzxid 0x${stat.mzxid.toString(16)}, pzxid 0x${stat.pzxid.toString(16)}, versions ${stat.version}/${stat.cversion}/${stat.aversion}`);
  }
}

/** The decoder of a reply with no body. */
function noReply(): undefined {
  return undefined;
}
