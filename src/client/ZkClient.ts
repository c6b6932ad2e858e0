import { EventEmitter } from 'node:events';
import { inspect, type InspectOptions } from 'node:util';
import debug from 'debug';
import { InvalidArgumentError, isZkError } from '../errors';
import { validatePath } from '../paths';
import { isRetryableError } from '../retry';
import { splitConnectString, type ACL, type ClientIdentity, type OptionalOperation, type ReadOp, type Stat, type Transport, type WatchEvent, type Watcher } from '../transport/Transport';
import { abortReason, raceAbort } from '../util/async';
import { emitSafely } from '../util/events';
import { showAs } from '../util/redact';
import { now } from '../util/timers';
import { toData, validateBoolean, validateOptions, validateSignal, validateTimeout } from '../validate';
import { aclsFrom, type AclForPath } from './acls';
import { BackgroundDeletes } from './BackgroundDeletes';
import { Connection } from './Connection';
import type { ConnectionState } from './ConnectionState';
import { isErrorState } from './ConnectionState';
import { ConnectionStateManager } from './ConnectionStateManager';
import { createNode, type CreateContext, type CreatedNode, type CreateRequest } from './createNode';
import { Namespace } from './Namespace';
import { compressData, compressionWanted, decompressData } from './compression';
import type {
  BlockUntilConnectedOptions,
  CreateOptions,
  CreatedAndListed,
  DeleteOptions,
  GetDataOptions,
  OperationOptions,
  SetAclOptions,
  SetDataOptions,
  StateListener,
  WatchOptions,
  ZkClientEvents,
} from './operationOptions';
import { deleteTree, mkdirs } from './nodeOps';
import { resolveClientOptions, type ResolvedClientOptions, type ZkClientOptions } from './options';
import { startPersistentWatch, type PersistentWatcher } from './PersistentWatcher';
import { checkRequestSize, createRequestBytes, multiRequestBytes, pathRequestBytes, setDataRequestBytes } from './requestSize';
import { RetryLoop } from './RetryLoop';
import { commitWithMarker } from './safeCommit';
import { requireCall, toMultiReadResults, validateReadOps, type MultiReadResult } from './serverInfo';
import { Transaction, commitTransaction } from './Transaction';
import type { Session } from './Session';
import type { HasSessionCredentials, SessionCredentials } from './SessionCredentials';
import { MAX_TTL_MS, validateAcl, validateMode, validateSession, validateTtl, validateVersion, validateWatcher } from './validation';
import { OneShotWatches, type WatchKind } from './OneShotWatches';

const log = debug('zk-recipes:client');

export type {
  OperationOptions,
  CreateOptions,
  DeleteOptions,
  WatchOptions,
  GetDataOptions,
  SetDataOptions,
  SetAclOptions,
  BlockUntilConnectedOptions,
  CreatedAndListed,
  StateListener,
  ZkClientEvents,
} from './operationOptions';

/**
 * A ZooKeeper client with Curator's behaviour: CuratorFramework for Node.
 *
 * - Connection states follow Curator: CONNECTED, SUSPENDED, RECONNECTED, LOST (the session expired,
 *   or the server has not been heard from for as long as it keeps a silent session: the client then
 *   starts a new session), each reported once to 'stateChanged' listeners. A throwing listener
 *   never breaks the client. `client.session` is the current session as a value, whose signal
 *   aborts when it ends.
 * - Every operation waits up to `connectionTimeoutMs` for a connection, then retries
 *   CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONMOVED and SESSIONEXPIRED under the retry policy.
 *   Other errors reject at once.
 * - Paths are relative to the namespace; bad input is rejected with InvalidArgumentError before
 *   any I/O, every request's size included.
 * - `console.log(client)` and `util.inspect` at any depth show no secret: not the TLS key or its
 *   passphrase, not the `authInfo` credentials, not the session password.
 *
 * @example
 * ```ts
 * const client = new ZkClient({ connectString: '127.0.0.1:2181', namespace: 'app' });
 * client.start();
 * await client.blockUntilConnected({ timeoutMs: 10_000 }); // ConnectionTimeoutError if not
 * await client.create('/config', { data: '{}', createParents: 'container' });
 * await client.close();
 * ```
 */
export class ZkClient extends EventEmitter<ZkClientEvents> implements HasSessionCredentials, AsyncDisposable {
  readonly options: ResolvedClientOptions;
  private readonly states: ConnectionStateManager;
  private readonly watches = new OneShotWatches();
  /** A watch event as the user sees it: its path relative to the namespace. */
  private readonly toUserEvent = (event: WatchEvent): WatchEvent => ({ ...event, path: this.ns.relative(event.path) });
  private readonly connection: Connection;
  private readonly retry: RetryLoop;
  private readonly ns: Namespace;
  /** The ACL of each node the client creates: the aclProvider's, or the open ACL without one. */
  private readonly aclFor: AclForPath;
  /** What every create of this client runs with. */
  private readonly createContext: CreateContext;
  private readonly background: BackgroundDeletes;
  /** The chroot of the connect string, which the servers put in front of every path. */
  private readonly chroot: string;

  constructor(options: ZkClientOptions) {
    super();
    // Every recipe on this client listens for 'stateChanged' and 'closed': a service with a dozen
    // locks and caches on one client is normal use, not a leak, so Node's warning at 10 is off.
    this.setMaxListeners(0);
    this.options = resolveClientOptions(options);
    this.states = new ConnectionStateManager(this);
    this.connection = new Connection(this.options, this.states, this.watches, this.options.transportFactory);
    this.retry = new RetryLoop(this.connection, this.options.retryPolicy, this.options.connectionTimeoutMs);
    this.aclFor = aclsFrom(this.options.aclProvider);
    this.ns = new Namespace(this.options.namespace, this.retry, this.aclFor);
    this.background = new BackgroundDeletes(this.connection, this.options.connectionTimeoutMs);
    this.createContext = { retry: this.retry, namespace: this.ns, background: this.background, aclFor: this.aclFor };
    this.chroot = splitConnectString(this.options.connectString).chroot;
  }

  /** What `util.inspect` (and `console.log`) show: the options, with their secrets redacted, and the state. */
  [inspect.custom](_depth: number, options: InspectOptions, show: typeof inspect = inspect): string {
    const sessionId = this.sessionId === 0n ? null : `0x${this.sessionId.toString(16)}`;
    return showAs('ZkClient', { state: this.state, sessionId, options: this.options }, options, show);
  }

  // The typed overloads make a misspelled event name a compile error that lists the names there
  // are: EventEmitter's own signatures accept any string.
  /** Listens for a connection state change (see ZkClientEvents). */
  override on(event: 'stateChanged', listener: StateListener): this;
  /** Listens for `close()`. */
  override on(event: 'closed', listener: () => void): this;
  override on(event: keyof ZkClientEvents, listener: (...args: never[]) => void): this {
    return super.on(event, listener as never);
  }

  /** Listens for the next connection state change only (see ZkClientEvents). */
  override once(event: 'stateChanged', listener: StateListener): this;
  /** Listens for `close()`, once. */
  override once(event: 'closed', listener: () => void): this;
  override once(event: keyof ZkClientEvents, listener: (...args: never[]) => void): this {
    return super.once(event, listener as never);
  }

  /** Removes a listener added with `on` or `once`. */
  override off(event: 'stateChanged', listener: StateListener): this;
  /** Removes a listener added with `on` or `once`. */
  override off(event: 'closed', listener: () => void): this;
  override off(event: keyof ZkClientEvents, listener: (...args: never[]) => void): this {
    return super.off(event, listener as never);
  }

  /** The connection state; undefined before the first connection. */
  get state(): ConnectionState | undefined {
    return this.states.state;
  }

  /** Whether the client has a live connection now. */
  get isConnected(): boolean {
    return this.connection.isConnected;
  }

  /**
   * Runs `send`, whose requests (made synchronously) leave in one write when it returns, where the
   * transport can (see `Transport.batch`): reads that belong together, in one round trip's write.
   *
   * @internal For the recipes; not in the published declarations.
   */
  batch<T>(send: () => T): T {
    const t = this.connection.live()?.transport;
    return t?.batch ? t.batch(send) : send();
  }

  /**
   * Whether the connection can be trusted now: connected, and this process has not stalled (a
   * SIGSTOP, a long GC pause, a blocked event loop) for a third of the session timeout or more,
   * or has had an answer since to a request sent after that stall. After such a stall, what the
   * server sent before it expired the session is read before the client can notice: a lock or a
   * leadership won on it is not handed out until a read in the session proves it still stands.
   */
  get isConnectionTrusted(): boolean {
    return this.connection.isTrusted;
  }

  get isStarted(): boolean {
    return this.connection.isStarted;
  }

  /** The current session; undefined before the first connection, and between a LOST and the next session. */
  get session(): Session | undefined {
    return this.connection.session;
  }

  /**
   * The servers (and chroot) the client connects to: `connectString`, until the ensemble tracker
   * (the `ensembleTracker` option) has moved it to the members the ensemble's configuration lists.
   * Curator's `getCurrentConnectionString()`.
   */
  get currentConnectString(): string {
    return this.connection.connectString;
  }

  /** The current session's id while connected; 0n otherwise. Exact: session ids are 64-bit. */
  get sessionId(): bigint {
    return this.connection.live()?.session.id ?? 0n;
  }

  /** The session timeout the server granted; 0 before the first connection. */
  get negotiatedSessionTimeoutMs(): number {
    return this.connection.negotiatedSessionTimeoutMs;
  }

  get namespace(): string | undefined {
    return this.options.namespace;
  }

  /**
   * Whether the client's transport can do `operation`: the protocol transport does them all; the
   * native binding none. Recipes use it to pick their path (a read less, a transaction, a
   * persistent watch) and fall back where the transport lacks it.
   */
  supports(operation: OptionalOperation): boolean {
    return typeof this.connection.transportNow?.[operation] === 'function';
  }

  /** Whether `state` is one recipes must treat as an error under this client's policy. */
  isErrorState(state: ConnectionState): boolean {
    return isErrorState(this.options.connectionStateErrorPolicy, state);
  }

  /**
   * The current session's id and password, connected or not (0n when there is no session): what
   * `expireSession` in `zk-recipes/testing` needs.
   */
  getSessionCredentials(): SessionCredentials {
    return { connectString: this.connection.connectString, sessionId: this.connection.session?.id ?? 0n, sessionPassword: this.connection.sessionPassword };
  }

  /** Opens the connection. A client starts once. */
  start(): void {
    this.connection.start();
  }

  /**
   * Resolves once connected. Rejects with ConnectionTimeoutError when `timeoutMs` passes first (its
   * message says where the client tried, why the last attempt failed, and how long it waited), with
   * the signal's reason on abort, and with ClientClosedError when the client closes. With
   * `authInfo`, a session counts as connected (and CONNECTED is reported) only once the server has
   * accepted every credential; if it refuses one, this rejects with a ZkError of code AUTHFAILED,
   * as every operation does from then on, and no state is reported.
   */
  async blockUntilConnected(options: BlockUntilConnectedOptions = {}): Promise<void> {
    const o = validateOptions(options, 'options');
    const timeoutMs = validateTimeout(o.timeoutMs, 'timeoutMs') ?? Infinity;
    const signal = validateSignal(o.signal);
    if (signal?.aborted) throw abortReason(signal);
    this.connection.assertOpen();
    if (this.connection.isConnected) return;
    const startedAt = now();
    if ((await this.connection.waitForConnection(timeoutMs, signal)) === undefined) throw this.connection.connectionTimeout(now() - startedAt);
  }

  /**
   * Closes the session and the connection: the server deletes the session's ephemeral nodes. The
   * session's signal aborts first, so every lease, latch and selector of this client stops trusting
   * what it holds; pending waits reject with ClientClosedError. Never blocks the event loop.
   * Idempotent.
   */
  async close(): Promise<void> {
    if (this.connection.isClosed) return;
    // The session ends in the synchronous part of the connection's close; then we tell.
    const closing = this.connection.close();
    emitSafely(this, 'closed', [], log);
    await closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ---------------------------------------------------------------- operations

  /**
   * Creates a node and resolves to its path (relative to the namespace; with the sequence suffix
   * for sequential modes). With `protected`, a create whose reply was lost is found again by its
   * `_c_<uuid>-` prefix; an ephemeral node found that way that belongs to another session is
   * deleted and created anew (CURATOR-498). If retries run out, a node the lost create may have
   * made is found and deleted in the background. On abort, a node created after all is deleted.
   * With `compressed` (or the client's `enableCompression`), the data is compressed first; a
   * provider that fails rejects with CompressionError, and nothing is created.
   */
  async create(path: string, options: CreateOptions = {}): Promise<string> {
    return (await this.createNode(path, options, false)).path;
  }

  /**
   * Creates a node like `create`, and lists its parent in the same round trip: ZooKeeper runs one
   * session's requests in order, so the listing, sent right behind the create, already holds the
   * new node. `parentStat.pzxid` is the zxid of the parent's latest child change at that moment.
   *
   * A recipe that makes the same node again and again passes `prepared`, what `prepareCreate`
   * made of this path and these options on this client: then nothing but `options.signal` (the
   * recipe's own) is read, and nothing is checked again.
   *
   * @internal For the recipes that wait in line; not in the published declarations.
   */
  createAndListParent(path: string, options: CreateOptions = {}, prepared?: PreparedCreate): Promise<CreatedAndListed> {
    if (prepared instanceof PreparedCreate && prepared.client === this && prepared.request.path === path) return this.createPrepared(prepared, options.signal);
    return this.createNode(path, options, true) as Promise<CreatedAndListed>;
  }

  /**
   * Checks a create without running it: the path, the mode, the data and the whole request's size,
   * as `create` would before any I/O. Recipes check their nodes this way when they are built.
   *
   * @throws InvalidArgumentError naming the problem.
   * @internal For the recipes; not in the published declarations.
   */
  validateCreate(path: string, options: CreateOptions = {}): void {
    this.checkCreate(path, options);
  }

  /**
   * Checks a create once, as `create` would, for a recipe that makes the same node again and again
   * (a lock's node on every acquire): `createAndListParent` then runs it without checking its
   * path, mode, data and size again. With an `aclProvider`, whose ACL may differ from one call to
   * the next, and with compressed data, whose size is known only once compressed, the request's
   * size is still checked on every run.
   *
   * @throws InvalidArgumentError naming the problem.
   * @internal For the recipes; not in the published declarations.
   */
  prepareCreate(path: string, options: Omit<CreateOptions, 'signal'> = {}): PreparedCreate {
    const { compressed, signal: _signal, ...request } = this.checkCreate(path, options);
    return new PreparedCreate(this, request, compressed);
  }

  /**
   * `createAndListParent` of a create checked by `prepareCreate` on this client: with no
   * compression and no ACL provider (nothing to check again), and the namespace made, straight to
   * `createNode`.
   */
  private createPrepared(prepared: PreparedCreate, signal: AbortSignal | undefined): Promise<CreatedAndListed> {
    if (prepared.compressed || this.options.aclProvider !== undefined) return this.createPreparedChecked(prepared, signal);
    const request = listedCreate(prepared, prepared.request.data, signal);
    const namespaceMade = this.ns.ensure(signal);
    if (namespaceMade) return namespaceMade.then(() => createNode(this.createContext, request) as Promise<CreatedAndListed>);
    return createNode(this.createContext, request) as Promise<CreatedAndListed>;
  }

  /** `createPrepared` whose data is compressed now, or whose size is checked again (its ACL may differ from the last). */
  private async createPreparedChecked(prepared: PreparedCreate, signal: AbortSignal | undefined): Promise<CreatedAndListed> {
    const { path, mode, ttlMs } = prepared.request;
    const isProtected = prepared.request.protected;
    let data = prepared.request.data;
    if (prepared.compressed) data = await raceAbort(compressData(this.options.compression, path, data), signal);
    this.checkCreateSize(path, mode, isProtected, ttlMs, data.length);
    const namespaceMade = this.ns.ensure(signal);
    if (namespaceMade) await namespaceMade;
    return (await createNode(this.createContext, listedCreate(prepared, data, signal))) as CreatedAndListed;
  }

  private checkCreate(path: string, options: CreateOptions) {
    const o = validateOptions(options, 'options');
    const mode = o.mode === undefined ? 'PERSISTENT' : validateMode(o.mode);
    validatePath(path, { sequential: mode.includes('SEQUENTIAL') });
    if (path === '/') throw new InvalidArgumentError('cannot create the root node', { path });
    const compressed = this.compressionWanted(o.compressed);
    const data = o.data === undefined ? this.options.defaultData : toData(o.data, 'data', !compressed);
    const ttlMs = mode.endsWith('_WITH_TTL') ? validateTtl(o.ttlMs, MAX_TTL_MS) : undefined;
    if (ttlMs === undefined && o.ttlMs !== undefined) throw new InvalidArgumentError(`ttlMs applies only to the TTL modes, not ${mode}`);
    if (o.createParents !== undefined && o.createParents !== 'container' && o.createParents !== 'persistent') {
      throw new InvalidArgumentError(`createParents must be 'container' or 'persistent', got ${String(o.createParents)}`);
    }
    const isProtected = o.protected === true;
    // Compressed data is checked once compressed, when its size is known.
    if (!compressed) this.checkCreateSize(path, mode, isProtected, ttlMs, data.length);
    const signal = validateSignal(o.signal);
    return { path, data, mode, ttlMs, createParents: o.createParents, protected: isProtected, signal, compressed };
  }

  private checkCreateSize(path: string, mode: string, isProtected: boolean, ttlMs: number | undefined, dataBytes: number): void {
    // The protected name adds `_c_` + a UUID + '-' (40 characters) to the last segment; the sequence, 10 digits.
    const added = (isProtected ? 40 : 0) + (mode.includes('SEQUENTIAL') ? 10 : 0);
    const acl = this.aclFor(this.ns.full(path));
    checkRequestSize(createRequestBytes(this.serverPath(path), dataBytes, ttlMs !== undefined, acl, added), this.options.maxRequestBytes, 'the create', path);
  }

  private async createNode(path: string, options: CreateOptions, listParent: boolean): Promise<CreatedNode> {
    const { compressed, ...request } = this.checkCreate(path, options);
    if (compressed) {
      request.data = await raceAbort(compressData(this.options.compression, path, request.data), request.signal);
      this.checkCreateSize(path, request.mode, request.protected, request.ttlMs, request.data.length);
    }
    const namespaceMade = this.ns.ensure(request.signal);
    if (namespaceMade) await namespaceMade;
    return createNode(this.createContext, { ...request, listParent });
  }

  /** Whether an operation's data is compressed: its own `compressed` flag, else the client's `enableCompression`. */
  private compressionWanted(flag: unknown): boolean {
    return compressionWanted(flag, this.options.enableCompression);
  }

  /**
   * Deletes a node. See DeleteOptions for versions, recursion, guaranteed and quiet deletes, and
   * for `session`: a delete of an ephemeral node pinned to the node's session, which never runs
   * in a later one (there it rejects with SessionLostError).
   */
  async delete(path: string, options: DeleteOptions = {}): Promise<void> {
    const o = validateOptions(options, 'options');
    this.checkPath(path, 'the delete');
    if (path === '/') throw new InvalidArgumentError('cannot delete the root node', { path });
    const version = validateVersion(o.version);
    const signal = validateSignal(o.signal);
    const session = validateSession(o.session);
    return this.deleteChecked(path, version, o.recursive === true, o.guaranteed === true, o.quietly === true, signal, session);
  }

  /**
   * A guaranteed, quiet delete (see `delete`) of a node a create of this client returned: that
   * create checked its path, and a delete request is smaller than the create that made the node,
   * so neither is checked again. `signal` is the recipe's own, not a user's value.
   *
   * @internal For the recipes' own nodes (see deleteOwnNode); not in the published declarations.
   */
  deleteCreated(node: string, signal: AbortSignal | undefined): Promise<void> {
    return this.deleteChecked(node, -1, false, true, true, signal, undefined);
  }

  private async deleteChecked(
    path: string,
    version: number,
    recursive: boolean,
    guaranteed: boolean,
    quietly: boolean,
    signal: AbortSignal | undefined,
    session: Session | undefined,
  ): Promise<void> {
    const full = this.ns.full(path);
    try {
      const namespaceMade = this.ns.ensure(signal);
      if (namespaceMade) await namespaceMade;
      await raceAbort(
        this.retry.run({ operation: 'delete', path, signal, session }, (t, n) => {
          const deleting = recursive ? deleteTree(t, full, version, true) : t.delete(full, version);
          // After a lost reply, NONODE means the earlier attempt did the work.
          return n > 0 && guaranteed ? deleting.catch(doneIfNoNode) : deleting;
        }),
        signal,
      );
    } catch (err) {
      if (quietly && isZkError(err, 'NONODE')) return;
      // A pinned delete goes on in its own session only (none once that has ended: the node went with it).
      if (guaranteed && (isRetryableError(err) || err === signal?.reason)) this.background.delete(full, version, recursive, session);
      throw err;
    }
  }

  /** Stat of the node, or null when it does not exist. A watcher is set either way. */
  async exists(path: string, options: WatchOptions = {}): Promise<Stat | null> {
    return this.read('exists', path, options, 'data', existsOf, true).catch(nullIfNoNode);
  }

  /**
   * Data and stat of the node. With `compressed` (or the client's `enableCompression`), the data
   * is decompressed by the client's `compression` provider, and data it cannot read rejects with
   * CompressionError; a watcher given is set all the same.
   */
  async getData(path: string, options: GetDataOptions = {}): Promise<{ data: Buffer; stat: Stat }> {
    const o = validateOptions(options, 'options');
    const compressed = this.compressionWanted(o.compressed);
    const read = await this.read('getData', path, options, 'data', getDataOf);
    if (!compressed) return read;
    const signal = validateSignal(o.signal);
    return { data: await raceAbort(decompressData(this.options.compression, path, read.data), signal), stat: read.stat };
  }

  /** Names of the node's children, unsorted. */
  async getChildren(path: string, options: WatchOptions = {}): Promise<string[]> {
    return (await this.getChildrenWithStat(path, options)).children;
  }

  /** Names of the node's children and the node's stat (whose `pzxid` is the last child change). */
  getChildrenWithStat(path: string, options: WatchOptions = {}): Promise<{ children: string[]; stat: Stat }> {
    return this.read('getChildren', path, options, 'children', getChildrenOf);
  }

  /**
   * Writes data, if the version matches (-1, the default, matches any). With `compressed` (or the
   * client's `enableCompression`), the data is compressed first; a provider that fails rejects
   * with CompressionError, and nothing is written.
   */
  async setData(path: string, data: Buffer | Uint8Array | string, options: SetDataOptions = {}): Promise<Stat> {
    const o = validateOptions(options, 'options');
    validatePath(path);
    const compressed = this.compressionWanted(o.compressed);
    const given = toData(data, 'data', !compressed);
    if (!compressed) checkRequestSize(setDataRequestBytes(this.serverPath(path), given.length), this.options.maxRequestBytes, 'the setData', path);
    const version = validateVersion(o.version);
    const signal = validateSignal(o.signal);
    const bytes = compressed ? await raceAbort(compressData(this.options.compression, path, given), signal) : given;
    if (compressed) checkRequestSize(setDataRequestBytes(this.serverPath(path), bytes.length), this.options.maxRequestBytes, 'the setData', path);
    await this.ns.ensure(signal);
    const full = this.ns.full(path);
    return raceAbort(
      this.retry.run({ operation: 'setData', path, signal }, (t) => t.setData(full, bytes, version)),
      signal,
    );
  }

  /** Makes the server this client talks to catch up with the leader for `path`. */
  async sync(path: string, options: OperationOptions = {}): Promise<void> {
    await this.simple('sync', path, options, (t, full) => t.sync(full));
  }

  async getACL(path: string, options: OperationOptions = {}): Promise<{ acl: ACL[]; stat: Stat }> {
    return this.simple('getACL', path, options, (t, full) => t.getACL(full));
  }

  async setACL(path: string, acl: readonly ACL[], options: SetAclOptions = {}): Promise<void> {
    validateAcl(acl);
    const version = validateVersion(validateOptions(options, 'options').version);
    await this.simple('setACL', path, options, (t, full) => t.setACL(full, acl, version));
  }

  /**
   * Several reads in one request, as the Java client's `multi` of `Op.getData` and
   * `Op.getChildren`: the server runs them one after the other with nothing in between, so they
   * see the tree at one moment. Not atomic: each read succeeds or fails on its own, and a failed
   * one (a missing node) is an 'error' result with its ServerError, not a rejection. Sets no
   * watch. Needs the protocol transport: on the native binding it rejects with UnsupportedError.
   *
   * @example
   * ```ts
   * const [config, workers] = await client.multiRead([
   *   { type: 'getData', path: '/config' },
   *   { type: 'getChildren', path: '/workers' },
   * ]);
   * if (config.type === 'error') throw config.error; // a NodeError 'NONODE' when it is missing
   * ```
   */
  async multiRead(ops: readonly ReadOp[], options: OperationOptions = {}): Promise<MultiReadResult[]> {
    const o = validateOptions(options, 'options');
    const reads = validateReadOps(ops);
    const sent = reads.map((op) => ({ ...op, path: this.ns.full(op.path) }));
    checkRequestSize(multiRequestBytes(sent.map((op) => ({ ...op, path: this.chroot + op.path }))), this.options.maxRequestBytes, 'the multiRead', reads[0].path);
    const signal = validateSignal(o.signal);
    await this.ns.ensure(signal);
    const results = await raceAbort(
      this.retry.run({ operation: 'multiRead', path: reads[0].path, signal }, (t) => requireCall(t, 'multiRead')(sent)),
      signal,
    );
    return toMultiReadResults(results, reads);
  }

  /**
   * The paths of this session's ephemeral nodes whose path starts with `prefix` (as text:
   * '/locks/a' matches '/locks/a1'), relative to the namespace; '/' (the default) gives them all
   * within the namespace. In no particular order. Needs the protocol transport: on the native
   * binding it rejects with UnsupportedError.
   */
  async getEphemerals(prefix = '/', options: OperationOptions = {}): Promise<string[]> {
    const o = validateOptions(options, 'options');
    this.checkPath(prefix, 'the getEphemerals');
    const signal = validateSignal(o.signal);
    // Within the namespace only: '/app' as a prefix would also match '/application'.
    const full = prefix === '/' && this.options.namespace !== undefined ? `${this.ns.full('/')}/` : this.ns.full(prefix);
    const paths = await raceAbort(
      this.retry.run({ operation: 'getEphemerals', path: prefix, signal }, (t) => requireCall(t, 'getEphemerals')(full)),
      signal,
    );
    return paths.map((p) => this.ns.relative(p));
  }

  /**
   * How many nodes there are below `path`, all levels down (the node itself not counted). Rejects
   * with NodeError 'NONODE' when it does not exist. Needs the protocol transport: on the native
   * binding it rejects with UnsupportedError.
   */
  async getAllChildrenNumber(path: string, options: OperationOptions = {}): Promise<number> {
    return this.simple('getAllChildrenNumber', path, options, (t, full) => requireCall(t, 'getAllChildrenNumber')(full));
  }

  /**
   * Who the server thinks this session is: one entry per identity ('ip' with the client's address,
   * and one per scheme added with `authInfo`). Needs the protocol transport: on the native binding
   * it rejects with UnsupportedError.
   */
  async whoAmI(options: OperationOptions = {}): Promise<ClientIdentity[]> {
    const signal = validateSignal(validateOptions(options, 'options').signal);
    return raceAbort(
      this.retry.run({ operation: 'whoAmI', path: '/', signal }, (t) => requireCall(t, 'whoAmI')()),
      signal,
    );
  }

  /** Creates the node and its missing parents, as containers or persistent nodes. Existing nodes are left alone. */
  async ensurePath(path: string, options: OperationOptions & { container?: boolean } = {}): Promise<void> {
    const o = validateOptions(options, 'options');
    await this.simple('ensurePath', path, options, (t, full) => (full === '/' ? Promise.resolve() : mkdirs(t, full, o.container ? 'CONTAINER' : 'PERSISTENT', this.aclFor)));
  }

  /**
   * Takes back a one-shot watcher set by a read on `path`: it will not be called. On the protocol
   * transport the watch is also removed from the server when no other watcher of this client needs
   * it, as Curator's WatcherRemoveCuratorFramework does, so a recipe that is done leaves no watch
   * behind. The native transport cannot remove watches: there the watcher is only forgotten. A
   * watcher whose read is still in flight is forgotten at once, and its watch removed from the
   * server in the background once the read answers (the server may hold it already). Never
   * rejects for a watch that is already gone.
   */
  async removeWatcher(path: string, watcher: Watcher, options: OperationOptions & { kind?: WatchKind | 'any' } = {}): Promise<void> {
    const o = validateOptions(options, 'options');
    validatePath(path);
    validateWatcher(watcher);
    const kind = o.kind ?? 'any';
    if (kind !== 'any' && kind !== 'data' && kind !== 'children') throw new InvalidArgumentError(`kind must be 'data', 'children' or 'any', got ${String(kind)}`);
    await this.watches.remove(this.ns.full(path), watcher, kind, this.connection.transportNow);
  }

  /**
   * A transaction: operations committed together with ZooKeeper's multi, all or none. Needs the
   * protocol transport (the native binding has no multi: `commit()` rejects with UnsupportedError).
   * See Transaction.
   */
  transaction(): Transaction {
    return new Transaction(
      (ops, signal, session, markerParent) => {
        const ctx = this.createContext;
        return markerParent === undefined ? commitTransaction(ctx, ops, signal, session) : commitWithMarker(ctx, ops, markerParent, signal, session);
      },
      (ops) => {
        const sized = ops.map((op) => ({ ...op, path: this.serverPath(op.path), ...(op.type === 'create' ? { acl: this.aclFor(this.ns.full(op.path)) } : {}) }));
        checkRequestSize(multiRequestBytes(sized), this.options.maxRequestBytes, 'the transaction', ops[0].path);
      },
      this.options.defaultData,
      { provider: this.options.compression, enabled: this.options.enableCompression },
    );
  }

  /**
   * A persistent watch on `path` (`recursive`: and its whole subtree), set on the server when the
   * promise resolves: it does not end when it fires. See PersistentWatcher for what it reports, on
   * reconnects and new sessions too. Needs the protocol transport (rejects with UnsupportedError on
   * the native binding).
   */
  async watch(path: string, options: OperationOptions & { recursive?: boolean } = {}): Promise<PersistentWatcher> {
    const o = validateOptions(options, 'options');
    this.checkPath(path, 'the watch');
    const signal = validateSignal(o.signal);
    const recursive = o.recursive === undefined ? false : validateBoolean(o.recursive, 'recursive');
    await this.ns.ensure(signal);
    return startPersistentWatch({ client: this, connection: this.connection, retry: this.retry, namespace: this.ns }, path, recursive, signal);
  }

  /**
   * For tests and diagnostics: how many background deletes are running.
   *
   * @internal Not in the published declarations.
   */
  get pendingBackgroundDeletes(): number {
    return this.background.size;
  }

  // ---------------------------------------------------------------- helpers

  /** The path as the servers see it: chroot, namespace, path. */
  private serverPath(path: string): string {
    return this.chroot + this.ns.full(path);
  }

  private checkPath(path: string, what: string): void {
    validatePath(path);
    checkRequestSize(pathRequestBytes(this.serverPath(path)), this.options.maxRequestBytes, what, path);
  }

  /** An operation on one path with no watch and no session pin. */
  private async simple<T>(operation: string, path: string, options: OperationOptions, call: (t: Transport, full: string) => Promise<T>): Promise<T> {
    const o = validateOptions(options, 'options');
    this.checkPath(path, 'the request');
    const signal = validateSignal(o.signal);
    await this.ns.ensure(signal);
    const full = this.ns.full(path);
    return raceAbort(
      this.retry.run({ operation, path, signal }, (t) => call(t, full)),
      signal,
    );
  }

  /** Runs a read that may set a watch, after checking its path and options (see `readChecked`). */
  private async read<T>(
    operation: string,
    path: string,
    options: WatchOptions,
    kind: WatchKind,
    call: (t: Transport, full: string, watcher: Watcher | undefined) => Promise<T>,
    watchSetOnNoNode = false,
  ): Promise<T> {
    const o = validateOptions(options, 'options');
    this.checkPath(path, 'the read');
    const signal = validateSignal(o.signal);
    validateWatcher(o.watcher);
    const session = validateSession(o.session);
    return this.readChecked(operation, path, o.watcher, session, signal, kind, call, watchSetOnNoNode);
  }

  /** Runs a read whose path and options are known good; forgets the watch when the server did not set it. */
  private readChecked<T>(
    operation: string,
    path: string,
    watcher: Watcher | undefined,
    session: Session | undefined,
    signal: AbortSignal | undefined,
    kind: WatchKind,
    call: (t: Transport, full: string, watcher: Watcher | undefined) => Promise<T>,
    watchSetOnNoNode = false,
  ): Promise<T> {
    // Once the namespace is made, `ensure` answers undefined: the read runs on the second call.
    const namespaceMade = this.ns.ensure(signal);
    if (namespaceMade) return namespaceMade.then(() => this.readChecked(operation, path, watcher, session, signal, kind, call, watchSetOnNoNode));
    const full = this.ns.full(path);
    if (!watcher) return raceAbort(this.retry.run({ operation, path, signal, session }, (t) => call(t, full, undefined)), signal);
    return raceAbort(
      this.retry.run({ operation, path, signal, session }, (t) => {
        const watch = this.watches.register(t, full, kind, watcher, this.toUserEvent);
        let reading: Promise<T>;
        try {
          reading = call(t, full, watch.native);
        } catch (err) {
          reading = Promise.reject(err);
        }
        return reading.then(
          (value) => {
            watch.answered(true);
            return value;
          },
          (err: unknown) => {
            const set = watchSetOnNoNode && isZkError(err, 'NONODE');
            if (!set) watch.forget();
            watch.answered(set);
            throw err;
          },
        );
      }),
      signal,
    );
  }

  // ------------------------------------------------- reads of the recipes' own paths

  /**
   * `getData` (never decompressed), `exists` and `getChildrenWithStat` of a path a recipe built
   * from one this client checked (its own node, a line's parent) and a name the server gave (the
   * node ahead in a line), with options that are the recipe's own values: checked when the recipe
   * was built, so not again on every read of a waiter's path.
   *
   * @internal For the recipes that wait in line; not in the published declarations.
   */
  getDataOfBuilt(path: string, watcher: Watcher | undefined, session: Session | undefined, signal: AbortSignal | undefined): Promise<{ data: Buffer; stat: Stat }> {
    return this.readChecked('getData', path, watcher, session, signal, 'data', getDataOf);
  }

  /** @internal See `getDataOfBuilt`. */
  existsOfBuilt(path: string, session: Session | undefined, signal: AbortSignal | undefined): Promise<Stat | null> {
    return this.readChecked('exists', path, undefined, session, signal, 'data', existsOf, true).catch(nullIfNoNode);
  }

  /** @internal See `getDataOfBuilt`. */
  getChildrenOfBuilt(path: string, session: Session | undefined, signal: AbortSignal | undefined): Promise<{ children: string[]; stat: Stat }> {
    return this.readChecked('getChildren', path, undefined, session, signal, 'children', getChildrenOf);
  }
}

function getDataOf(t: Transport, full: string, watcher: Watcher | undefined): Promise<{ data: Buffer; stat: Stat }> {
  return t.getData(full, watcher);
}

function existsOf(t: Transport, full: string, watcher: Watcher | undefined): Promise<Stat | null> {
  return t.exists(full, watcher);
}

function getChildrenOf(t: Transport, full: string, watcher: Watcher | undefined): Promise<{ children: string[]; stat: Stat }> {
  return t.getChildren(full, watcher);
}

/** `exists` answers null for a node that is not there, whichever way the transport tells it. */
function nullIfNoNode(err: unknown): null {
  if (isZkError(err, 'NONODE')) return null;
  throw err;
}

/**
 * A create checked once by `ZkClient.prepareCreate`, for the client that checked it.
 *
 * For the recipes, through recipeKit: published with it, since recipeKit re-exports it.
 */
export class PreparedCreate {
  /** @internal */
  constructor(
    readonly client: ZkClient,
    readonly request: Readonly<Omit<CreateRequest, 'listParent' | 'signal'>>,
    readonly compressed: boolean,
  ) {}
}

/** The create `createAndListParent` runs for `prepared`, with `data` as it is sent. */
function listedCreate(prepared: PreparedCreate, data: Buffer, signal: AbortSignal | undefined): CreateRequest {
  const { path, mode, ttlMs, createParents } = prepared.request;
  return { path, data, mode, ttlMs, createParents, protected: prepared.request.protected, listParent: true, signal };
}

/** A retried delete's NONODE: the attempt whose reply was lost deleted the node. */
function doneIfNoNode(err: unknown): void {
  if (!isZkError(err, 'NONODE')) throw err;
}
