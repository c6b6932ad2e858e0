import { randomUUID } from 'node:crypto';
import debug from 'debug';
import { ClientClosedError, InvalidArgumentError, ZkError, isZkError } from '../errors';
import { joinPath, validatePath, withNamespace, withoutNamespace } from '../paths';
import { isRetryableError } from '../retry';
import type { HasSessionCredentials, SessionCredentials } from '../testing/expireSession';
import type { ACL, CreateMode, Stat, Transport, WatchEvent, Watcher } from '../transport/Transport';
import { abortReason, raceAbort, sleep } from '../util/async';
import { describeValue, toData, validateSignal, validateTimeout } from '../validate';
import { ConnectionState, isErrorState } from './ConnectionState';
import { resolveClientOptions, type ResolvedClientOptions, type ZkClientOptions } from './options';
import { findProtectedNode, protectedName } from './protection';

const log = debug('zk-recipes:client');

const CREATE_MODES: ReadonlySet<string> = new Set<CreateMode>([
  'PERSISTENT',
  'PERSISTENT_SEQUENTIAL',
  'EPHEMERAL',
  'EPHEMERAL_SEQUENTIAL',
  'CONTAINER',
  'PERSISTENT_WITH_TTL',
  'PERSISTENT_SEQUENTIAL_WITH_TTL',
]);
/** The binding passes a TTL as a 32-bit int. */
const MAX_TTL_MS = 0x7fffffff;

export interface OperationOptions {
  /** Aborts the wait; the operation rejects with `signal.reason`. */
  signal?: AbortSignal;
}

export interface CreateOptions extends OperationOptions {
  /** Node data; `defaultData` (the local IP address, as Curator writes) when omitted. */
  data?: Buffer | Uint8Array | string;
  /** Default 'PERSISTENT'. */
  mode?: CreateMode;
  /** Time to live, for the TTL modes only. */
  ttlMs?: number;
  /** Create missing parents: 'container' (Curator's creatingParentContainersIfNeeded) or 'persistent' (creatingParentsIfNeeded). */
  createParents?: 'container' | 'persistent';
  /**
   * Curator's protection: the node's name gets the prefix `_c_<uuid>-`, so that after a connection
   * loss during the create the client finds its own node again instead of creating a second one.
   */
  protected?: boolean;
}

export interface DeleteOptions extends OperationOptions {
  /** Expected version; -1 (the default) matches any. */
  version?: number;
  /** Delete the children first, recursively. */
  recursive?: boolean;
  /** On a connection problem, keep retrying in the background until done or the session ends. The call still rejects. */
  guaranteed?: boolean;
  /** Resolve instead of rejecting when the node does not exist. */
  quietly?: boolean;
}

export interface WatchOptions extends OperationOptions {
  /**
   * One-shot watch: called once with the next event on the node; with 'sessionLost' when the
   * session ends; or with 'notWatching' when the watch could not be kept (the client replaced a
   * connection handle the native client had left in a broken state; the session lives on): read
   * again, and watch anew.
   */
  watcher?: Watcher;
  /**
   * Read only in this session (a `sessionId`): once the client has moved on to another session,
   * reject with SESSIONEXPIRED instead of retrying in the new one. For reads whose meaning rests on
   * an ephemeral node or a watch of that session: a watch a retry sets in a new session would
   * wait on behalf of a node that went with the old one.
   */
  session?: bigint;
}

export interface SetDataOptions extends OperationOptions {
  version?: number;
}

export interface BlockUntilConnectedOptions extends OperationOptions {
  timeoutMs?: number;
}

/** What `createAndListParent` resolves to. */
export interface CreatedAndListed {
  /** The new node's path, relative to the namespace. */
  path: string;
  /** The parent's children right after the create, unsorted; they include the new node. */
  children: string[];
  /** The parent's stat from the same read: `pzxid` is the zxid of its latest child change. */
  parentStat: Stat;
  /** The session the node was created in: for an ephemeral node, its owner. */
  sessionId: bigint;
}

/** What a create resolves to inside the client: the listing only when it was asked for. */
type Created = Omit<CreatedAndListed, 'children' | 'parentStat'> & Partial<Pick<CreatedAndListed, 'children' | 'parentStat'>>;

export type StateListener = (state: ConnectionState, previous: ConnectionState | undefined) => void;

type Lifecycle = 'LATENT' | 'STARTED' | 'CLOSED';

interface WatchEntry {
  readonly transport: Transport;
  readonly path: string;
  fire(event: WatchEvent): void;
}

/**
 * A ZooKeeper client with Curator's behaviour: CuratorFramework for Node.
 *
 * - Connection states follow Curator: CONNECTED, SUSPENDED, RECONNECTED, LOST (the session expired,
 *   or SUSPENDED outlasted the negotiated session timeout: the client then starts a new session),
 *   each reported once to `stateChanged` listeners. A throwing listener never breaks the client.
 * - Every operation waits up to `connectionTimeoutMs` for a connection, then retries
 *   CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONMOVED and SESSIONEXPIRED under the retry policy.
 *   Other errors reject at once.
 * - Paths are relative to the namespace; bad input is rejected with InvalidArgumentError before
 *   any I/O.
 *
 * @example
 * ```ts
 * const client = new ZkClient({ connectString: '127.0.0.1:2181', namespace: 'app' });
 * client.start();
 * await client.blockUntilConnected({ timeoutMs: 10_000 });
 * await client.create('/config', { data: '{}', createParents: 'container' });
 * await client.close();
 * ```
 */
export class ZkClient implements HasSessionCredentials, AsyncDisposable {
  readonly options: ResolvedClientOptions;
  private lifecycle: Lifecycle = 'LATENT';
  private transport: Transport | undefined;
  private connected = false;
  private everConnected = false;
  private stateValue: ConnectionState | undefined;
  private suspendTimer: NodeJS.Timeout | undefined;
  private fatal: ZkError | undefined;
  private readonly stateListeners = new Set<StateListener>();
  private readonly connectionWaiters = new Set<() => void>();
  private readonly watches = new Set<WatchEntry>();
  private namespaceReady: Promise<void> | undefined;
  private readonly backgroundDeletes = new Set<string>();

  constructor(options: ZkClientOptions) {
    this.options = resolveClientOptions(options);
  }

  /** The connection state; undefined before the first connection. */
  get state(): ConnectionState | undefined {
    return this.stateValue;
  }

  /** Whether the client has a live connection now. */
  get isConnected(): boolean {
    return this.connected;
  }

  get isStarted(): boolean {
    return this.lifecycle === 'STARTED';
  }

  /** The current session's id; 0n when there is none. Exact: session ids are 64-bit. */
  get sessionId(): bigint {
    return this.connected && this.transport ? this.transport.sessionId : 0n;
  }

  /** The session timeout the server granted; 0 before the first connection. */
  get negotiatedSessionTimeoutMs(): number {
    return this.transport?.negotiatedSessionTimeoutMs ?? 0;
  }

  get namespace(): string | undefined {
    return this.options.namespace;
  }

  /** Whether `state` is one recipes must treat as an error under this client's policy. */
  isErrorState(state: ConnectionState): boolean {
    return isErrorState(this.options.connectionStateErrorPolicy, state);
  }

  /** The current session's id and password: what `expireSession` in `zk-recipes/testing` needs. */
  getSessionCredentials(): SessionCredentials {
    const t = this.transport;
    return { connectString: this.options.connectString, sessionId: this.sessionId, sessionPassword: t ? t.sessionPassword : '' };
  }

  /** Listens to connection state changes. Returns a function that removes the listener. */
  on(event: 'stateChanged', listener: StateListener): () => void {
    if (event !== 'stateChanged') throw new InvalidArgumentError(`unknown event ${String(event)}`);
    if (typeof listener !== 'function') throw new InvalidArgumentError('listener must be a function');
    this.stateListeners.add(listener);
    return () => this.off(event, listener);
  }

  off(_event: 'stateChanged', listener: StateListener): void {
    this.stateListeners.delete(listener);
  }

  /** Opens the connection. A client starts once. */
  start(): void {
    if (this.lifecycle !== 'LATENT') throw new ZkError('ILLEGAL_STATE', `a client can be started only once (it is ${this.lifecycle})`);
    this.lifecycle = 'STARTED';
    this.transport = this.newTransport();
  }

  /**
   * Resolves true once connected, false when `timeoutMs` passes first. Rejects with the signal's
   * reason on abort, and with ClientClosedError when the client closes.
   */
  async blockUntilConnected(options: BlockUntilConnectedOptions = {}): Promise<boolean> {
    const timeoutMs = validateTimeout(options.timeoutMs, 'timeoutMs') ?? Infinity;
    const signal = validateSignal(options.signal);
    this.assertOpen();
    if (this.connected) return true;
    return (await this.waitForConnection(timeoutMs, signal)) !== undefined;
  }

  /** Closes the session and the handle. Pending waits reject with ClientClosedError. Idempotent. */
  async close(): Promise<void> {
    if (this.lifecycle === 'CLOSED') return;
    this.lifecycle = 'CLOSED';
    clearTimeout(this.suspendTimer);
    const t = this.transport;
    this.transport = undefined;
    this.connected = false;
    this.endWatches(undefined);
    this.notifyConnectionWaiters();
    t?.close();
    log('client closed (session %s)', t ? hex(t.sessionId) : '-');
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ---------------------------------------------------------------- connection handling

  private newTransport(): Transport {
    const { connectString, sessionTimeoutMs, tls, maxFrameBytes } = this.options;
    const t = this.options.transportFactory({ connectString, sessionTimeoutMs, tls, maxFrameBytes });
    t.on('connected', () => {
      if (t === this.transport) this.onConnected(t);
    });
    t.on('connecting', () => {
      if (t === this.transport) this.onDisconnected();
    });
    t.on('closed', (reason) => {
      if (t === this.transport && this.lifecycle === 'STARTED') this.onSessionEnded(reason === 'authFailed' ? 'authFailed' : 'expired');
    });
    for (const { scheme, auth } of this.options.authInfo) {
      // Queued by the native client until the connection is up, and re-sent on reconnects.
      t.addAuth(scheme, auth).catch((err: unknown) => log('adding %s auth failed: %O', scheme, err));
    }
    return t;
  }

  private onConnected(t: Transport): void {
    this.connected = true;
    clearTimeout(this.suspendTimer);
    this.suspendTimer = undefined;
    log('connected, session %s, timeout %d ms', hex(t.sessionId), t.negotiatedSessionTimeoutMs);
    if (this.everConnected) this.setState(ConnectionState.RECONNECTED);
    else {
      this.everConnected = true;
      this.setState(ConnectionState.CONNECTED);
    }
    this.notifyConnectionWaiters();
  }

  private onDisconnected(): void {
    if (!this.connected) return;
    this.connected = false;
    const timeoutMs = this.transport?.negotiatedSessionTimeoutMs || this.options.sessionTimeoutMs;
    log('disconnected, session %s; LOST after %d ms without a connection', hex(this.transport?.sessionId ?? 0n), timeoutMs);
    this.setState(ConnectionState.SUSPENDED);
    // The server expires the session once it has not heard from us for the session timeout; past
    // that, nothing held under the session can be trusted, even before the server says so.
    this.suspendTimer = setTimeout(() => this.onSessionEnded('suspendedTooLong'), timeoutMs);
  }

  private onSessionEnded(reason: 'expired' | 'suspendedTooLong' | 'authFailed'): void {
    clearTimeout(this.suspendTimer);
    this.suspendTimer = undefined;
    const old = this.transport;
    this.connected = false;
    log('session %s ended: %s', hex(old?.sessionId ?? 0n), reason);
    this.endWatches(old);
    if (this.everConnected) this.setState(ConnectionState.LOST);
    old?.close();
    if (reason === 'authFailed') {
      this.fatal = new ZkError('AUTHFAILED', 'authentication failed: the server refused the client credentials');
      this.transport = undefined;
      this.notifyConnectionWaiters();
      return;
    }
    this.transport = this.newTransport();
  }

  private setState(next: ConnectionState): void {
    const previous = this.stateValue;
    if (previous === next) return;
    this.stateValue = next;
    log('state %s -> %s (session %s)', previous ?? '-', next, hex(this.transport?.sessionId ?? 0n));
    for (const listener of [...this.stateListeners]) {
      try {
        listener(next, previous);
      } catch (err) {
        log('a stateChanged listener threw: %O', err);
      }
    }
  }

  private notifyConnectionWaiters(): void {
    for (const wake of [...this.connectionWaiters]) wake();
  }

  private assertOpen(): void {
    if (this.lifecycle === 'CLOSED') throw new ClientClosedError();
    if (this.lifecycle === 'LATENT') throw new ZkError('ILLEGAL_STATE', 'the client is not started: call start() first');
    if (this.fatal) throw this.fatal;
  }

  /** Resolves with the connected transport, or undefined when `timeoutMs` passes first. */
  private waitForConnection(timeoutMs: number, signal: AbortSignal | undefined): Promise<Transport | undefined> {
    return new Promise((resolve, reject) => {
      const done = () => {
        this.connectionWaiters.delete(check);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const check = () => {
        if (this.lifecycle === 'CLOSED' || this.fatal) {
          done();
          reject(this.fatal ?? new ClientClosedError());
        } else if (this.connected && this.transport) {
          done();
          resolve(this.transport);
        }
      };
      const onAbort = () => {
        done();
        reject(abortReason(signal as AbortSignal));
      };
      const timer = Number.isFinite(timeoutMs)
        ? setTimeout(() => {
            done();
            resolve(undefined);
          }, timeoutMs)
        : undefined;
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.connectionWaiters.add(check);
      check();
    });
  }

  // ---------------------------------------------------------------- retry loop

  /**
   * Runs `fn` on a connected transport, retrying under the policy. `attempt` counts from 0, so
   * callers can tell a first attempt from a retry after an uncertain outcome.
   */
  private async execute<T>(
    path: string,
    signal: AbortSignal | undefined,
    fn: (t: Transport, attempt: number) => Promise<T>,
    session?: bigint,
  ): Promise<T> {
    const startedAt = Date.now();
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw abortReason(signal);
      this.assertOpen();
      let t = this.connected ? this.transport : undefined;
      try {
        if (t === undefined) {
          t = await this.waitForConnection(this.options.connectionTimeoutMs, signal);
          if (t === undefined) {
            throw new ZkError('CONNECTIONLOSS', `no connection within connectionTimeoutMs (${this.options.connectionTimeoutMs} ms)`, { path });
          }
        }
        if (session !== undefined && t.sessionId !== session) {
          throw new ZkError('SESSIONEXPIRED', `session ${hex(session)} has ended (the client is in session ${hex(t.sessionId)})`, { path });
        }
        return await fn(t, attempt);
      } catch (caught) {
        const err = this.translate(caught, t, path);
        if (!isRetryableError(err)) throw err;
        // A read pinned to a session cannot succeed in another one.
        if (session !== undefined && (isZkError(err, 'SESSIONEXPIRED') || (t !== undefined && t.sessionId !== session))) throw err;
        const delayMs = this.options.retryPolicy.allowRetry(attempt, Date.now() - startedAt, err);
        if (delayMs === false) {
          log('%s at %s: giving up after %d retries (session %s)', (err as ZkError).code, path, attempt, hex(t?.sessionId ?? 0n));
          throw err;
        }
        log('%s at %s: retry %d in %d ms (session %s)', (err as ZkError).code, path, attempt + 1, delayMs, hex(t?.sessionId ?? 0n));
        await sleep(delayMs, signal);
      }
    }
  }

  /** A handle closed under an operation means its session is gone (or the client closed). */
  private translate(err: unknown, t: Transport | undefined, path: string): unknown {
    if (this.lifecycle === 'CLOSED' && !(err instanceof ClientClosedError) && isZkError(err)) {
      return new ClientClosedError(`the client closed during the operation at ${path}`, { path, cause: err });
    }
    if (isZkError(err) && (err.code === 'CLOSING' || err.code === 'INVALIDSTATE') && t !== undefined && t !== this.transport) {
      return new ZkError('SESSIONEXPIRED', `the session ended during the operation at ${path}`, { path, cause: err });
    }
    return err;
  }

  private async ensureNamespace(signal: AbortSignal | undefined): Promise<void> {
    const ns = this.options.namespace;
    if (ns === undefined) return;
    if (!this.namespaceReady) {
      this.namespaceReady = this.execute(`/${ns}`, signal, (t) => mkdirs(t, `/${ns}`, 'PERSISTENT'));
      this.namespaceReady.catch(() => (this.namespaceReady = undefined));
    }
    await this.namespaceReady;
  }

  private full(path: string): string {
    return withNamespace(this.options.namespace, path);
  }

  private relative(fullPath: string): string {
    return withoutNamespace(this.options.namespace, fullPath);
  }

  // ---------------------------------------------------------------- watches

  private watchFor(t: Transport, fullPath: string, watcher: Watcher): { entry: WatchEntry; native: Watcher } {
    let fired = false;
    const entry: WatchEntry = {
      transport: t,
      path: fullPath,
      fire: (event) => {
        if (fired) return;
        fired = true;
        this.watches.delete(entry);
        try {
          watcher({ type: event.type, path: this.relative(event.path) });
        } catch (err) {
          log('a watcher on %s threw: %O', fullPath, err);
        }
      },
    };
    this.watches.add(entry);
    return { entry, native: entry.fire };
  }

  /** The native client drops watches silently when its session ends: tell their owners. */
  private endWatches(t: Transport | undefined): void {
    for (const entry of [...this.watches]) {
      if (t === undefined || entry.transport === t) entry.fire({ type: 'sessionLost', path: entry.path });
    }
  }

  /** Runs a read that may set a watch; forgets the watch when the server did not set it. */
  private async read<T>(
    path: string,
    options: WatchOptions,
    call: (t: Transport, full: string, watcher: Watcher | undefined) => Promise<T>,
    watchSetOnNoNode = false,
  ): Promise<T> {
    validatePath(path);
    const signal = validateSignal(options.signal);
    if (options.watcher !== undefined && typeof options.watcher !== 'function') throw new InvalidArgumentError('watcher must be a function');
    if (options.session !== undefined && (typeof options.session !== 'bigint' || options.session <= 0n)) {
      throw new InvalidArgumentError(`session must be a positive bigint session id, got ${describeValue(options.session)}`);
    }
    await this.ensureNamespace(signal);
    const full = this.full(path);
    return raceAbort(
      this.execute(
        path,
        signal,
        async (t) => {
          if (!options.watcher) return call(t, full, undefined);
          const { entry, native } = this.watchFor(t, full, options.watcher);
          try {
            return await call(t, full, native);
          } catch (err) {
            if (!(watchSetOnNoNode && isZkError(err, 'NONODE'))) this.watches.delete(entry);
            throw err;
          }
        },
        options.session,
      ),
      signal,
    );
  }

  // ---------------------------------------------------------------- operations

  /**
   * Creates a node and resolves to its path (relative to the namespace; with the sequence suffix
   * for sequential modes). With `protected`, a create whose reply was lost is found again by its
   * `_c_<uuid>-` prefix; an ephemeral node found that way that belongs to another session is
   * deleted and created anew (CURATOR-498). If retries run out, a node the lost create may have
   * made is found and deleted in the background. On abort, a node created after all is deleted.
   */
  async create(path: string, options: CreateOptions = {}): Promise<string> {
    return (await this.createNode(path, options, false)).path;
  }

  /**
   * Creates a node like `create`, and lists its parent in the same round trip: ZooKeeper runs one
   * session's requests in order, so the listing, sent right behind the create, already holds the
   * new node. `parentStat.pzxid` is the zxid of the parent's latest child change at that moment.
   */
  async createAndListParent(path: string, options: CreateOptions = {}): Promise<CreatedAndListed> {
    const created = await this.createNode(path, options, true);
    return created as CreatedAndListed;
  }

  private async createNode(path: string, options: CreateOptions, listParent: boolean): Promise<Created> {
    const mode = options.mode ?? 'PERSISTENT';
    if (!CREATE_MODES.has(mode)) throw new InvalidArgumentError(`mode must be one of ${[...CREATE_MODES].join(', ')}, got ${String(mode)}`);
    const sequential = mode.includes('SEQUENTIAL');
    validatePath(path, { sequential });
    if (path === '/') throw new InvalidArgumentError('cannot create the root node', { path });
    const data = options.data === undefined ? this.options.defaultData : toData(options.data);
    const ttlMs = mode.endsWith('_WITH_TTL') ? validateTtl(options.ttlMs) : undefined;
    if (ttlMs === undefined && options.ttlMs !== undefined) throw new InvalidArgumentError(`ttlMs applies only to the TTL modes, not ${mode}`);
    if (options.createParents !== undefined && options.createParents !== 'container' && options.createParents !== 'persistent') {
      throw new InvalidArgumentError(`createParents must be 'container' or 'persistent', got ${String(options.createParents)}`);
    }
    const signal = validateSignal(options.signal);
    await this.ensureNamespace(signal);

    const full = this.full(path);
    // Split by hand: a sequential path may end in '/', leaving the name to the server's counter.
    const slash = full.lastIndexOf('/');
    const parent = slash === 0 ? '/' : full.slice(0, slash);
    const protectedId = options.protected ? randomUUID() : undefined;
    const target = protectedId ? joinPath(parent, protectedName(protectedId, full.slice(slash + 1))) : full;
    const ephemeral = mode.startsWith('EPHEMERAL');
    const parentMode = options.createParents === 'container' ? 'CONTAINER' : 'PERSISTENT';

    const createOnce = async (t: Transport): Promise<Created> => {
      if (!listParent) return { path: await t.create(target, data, mode, ttlMs), sessionId: t.sessionId };
      const created = t.create(target, data, mode, ttlMs);
      const listing = t.getChildren(parent);
      // Both are on the wire now; the listing's failure follows the create's.
      listing.catch(() => undefined);
      const createdPath = await created;
      const { children, stat } = await listing;
      return { path: createdPath, children, parentStat: stat, sessionId: t.sessionId };
    };

    const attempt = this.execute(path, signal, async (t, n) => {
      if (protectedId && n > 0) {
        const found = await findProtectedNode(t, parent, protectedId, ephemeral, (stale) => this.deleteInBackground(stale));
        if (found) {
          if (!listParent) return { path: found, sessionId: t.sessionId };
          const { children, stat } = await t.getChildren(parent);
          return { path: found, children, parentStat: stat, sessionId: t.sessionId };
        }
      }
      for (let parentsTries = 0; ; parentsTries++) {
        try {
          return await createOnce(t);
        } catch (err) {
          // A container parent can be reaped between our mkdirs and our create: try again.
          if (!isZkError(err, 'NONODE') || options.createParents === undefined || parentsTries >= 3) throw err;
          // An emptied container ancestor can be reaped in the middle of mkdirs too: go round again.
          await mkdirs(t, parent, parentMode).catch((mkdirsErr: unknown) => {
            if (!isZkError(mkdirsErr, 'NONODE')) throw mkdirsErr;
          });
        }
      }
    });
    const created = await raceAbort(attempt, signal, (late) => {
      if (late.status === 'fulfilled') this.deleteInBackground(late.value.path);
      else if (protectedId && isRetryableError(late.reason)) this.deleteProtectedInBackground(parent, protectedId, ephemeral);
    }).catch((err: unknown) => {
      if (protectedId && isRetryableError(err)) this.deleteProtectedInBackground(parent, protectedId, ephemeral);
      throw err;
    });
    if (this.options.aclProvider) {
      const acl = this.options.aclProvider.getAclForPath(this.relative(created.path));
      await this.execute(path, signal, (t) => t.setACL(created.path, acl, -1));
    }
    return { ...created, path: this.relative(created.path) };
  }

  /** Deletes a node. See DeleteOptions for versions, recursion, guaranteed and quiet deletes. */
  async delete(path: string, options: DeleteOptions = {}): Promise<void> {
    validatePath(path);
    if (path === '/') throw new InvalidArgumentError('cannot delete the root node', { path });
    const version = validateVersion(options.version);
    const signal = validateSignal(options.signal);
    await this.ensureNamespace(signal);
    const full = this.full(path);
    try {
      await raceAbort(
        this.execute(path, signal, async (t, n) => {
          try {
            await deleteNode(t, full, version, options.recursive === true);
          } catch (err) {
            // After a lost reply, NONODE means the earlier attempt did the work.
            if (n > 0 && options.guaranteed && isZkError(err, 'NONODE')) return;
            throw err;
          }
        }),
        signal,
      );
    } catch (err) {
      if (options.quietly && isZkError(err, 'NONODE')) return;
      if (options.guaranteed && (isRetryableError(err) || err === signal?.reason)) this.deleteInBackground(full, version, options.recursive === true);
      throw err;
    }
  }

  /** Stat of the node, or null when it does not exist. A watcher is set either way. */
  exists(path: string, options: WatchOptions = {}): Promise<Stat | null> {
    return this.read(path, options, (t, full, w) => t.exists(full, w), true);
  }

  /** Data and stat of the node. */
  getData(path: string, options: WatchOptions = {}): Promise<{ data: Buffer; stat: Stat }> {
    return this.read(path, options, (t, full, w) => t.getData(full, w));
  }

  /** Names of the node's children, unsorted. */
  async getChildren(path: string, options: WatchOptions = {}): Promise<string[]> {
    return (await this.getChildrenWithStat(path, options)).children;
  }

  /** Names of the node's children and the node's stat (whose `pzxid` is the last child change). */
  getChildrenWithStat(path: string, options: WatchOptions = {}): Promise<{ children: string[]; stat: Stat }> {
    return this.read(path, options, (t, full, w) => t.getChildren(full, w));
  }

  /** Writes data, if the version matches (-1, the default, matches any). */
  async setData(path: string, data: Buffer | Uint8Array | string, options: SetDataOptions = {}): Promise<Stat> {
    validatePath(path);
    const bytes = toData(data);
    const version = validateVersion(options.version);
    const signal = validateSignal(options.signal);
    await this.ensureNamespace(signal);
    const full = this.full(path);
    return raceAbort(this.execute(path, signal, (t) => t.setData(full, bytes, version)), signal);
  }

  /** Makes the server this client talks to catch up with the leader for `path`. */
  async sync(path: string, options: OperationOptions = {}): Promise<void> {
    validatePath(path);
    const signal = validateSignal(options.signal);
    await this.ensureNamespace(signal);
    const full = this.full(path);
    await raceAbort(this.execute(path, signal, (t) => t.sync(full)), signal);
  }

  async getACL(path: string, options: OperationOptions = {}): Promise<{ acl: ACL[]; stat: Stat }> {
    validatePath(path);
    const signal = validateSignal(options.signal);
    await this.ensureNamespace(signal);
    const full = this.full(path);
    return raceAbort(this.execute(path, signal, (t) => t.getACL(full)), signal);
  }

  async setACL(path: string, acl: readonly ACL[], options: SetDataOptions = {}): Promise<void> {
    validatePath(path);
    validateAcl(acl);
    const version = validateVersion(options.version);
    const signal = validateSignal(options.signal);
    await this.ensureNamespace(signal);
    const full = this.full(path);
    await raceAbort(this.execute(path, signal, (t) => t.setACL(full, acl, version)), signal);
  }

  /** Creates the node and its missing parents, as containers or persistent nodes. Existing nodes are left alone. */
  async ensurePath(path: string, options: OperationOptions & { container?: boolean } = {}): Promise<void> {
    validatePath(path);
    const signal = validateSignal(options.signal);
    await this.ensureNamespace(signal);
    if (path === '/') return;
    const full = this.full(path);
    await raceAbort(this.execute(path, signal, (t) => mkdirs(t, full, options.container ? 'CONTAINER' : 'PERSISTENT')), signal);
  }

  // ---------------------------------------------------------------- background work

  /**
   * Deletes a node in the background, retrying on every connection problem until it is gone or
   * the session that asked ends.
   */
  private deleteInBackground(fullPath: string, version = -1, recursive = false): void {
    if (this.backgroundDeletes.has(fullPath)) return;
    this.backgroundDeletes.add(fullPath);
    this.inBackground(`background delete of ${fullPath}`, async (t) => {
      await deleteNode(t, fullPath, version, recursive);
      log('background delete of %s done (session %s)', fullPath, hex(t.sessionId));
    }).finally(() => this.backgroundDeletes.delete(fullPath));
  }

  /** Finds the node a lost protected create may have made, and deletes it (Curator's findAndDeleteProtectedNodeInBackground). */
  private deleteProtectedInBackground(parent: string, protectedId: string, ephemeral: boolean): void {
    void this.inBackground(`protected cleanup under ${parent}`, async (t) => {
      const found = await findProtectedNode(t, parent, protectedId, ephemeral, (stale) => this.deleteInBackground(stale));
      if (found) this.deleteInBackground(found);
    });
  }

  /**
   * Runs `work` on the current session's connection, again after every connection problem, until
   * it is done, fails otherwise, or the session that asked ends. Never rejects.
   */
  private async inBackground(what: string, work: (t: Transport) => Promise<void>): Promise<void> {
    const session = this.transport;
    try {
      while (this.lifecycle === 'STARTED' && this.transport === session) {
        try {
          const t = this.connected ? this.transport : await this.waitForConnection(this.options.connectionTimeoutMs, undefined);
          if (t === undefined || t !== session) continue;
          await work(t);
          return;
        } catch (err) {
          if (!isRetryableError(err)) {
            log('%s ended: %O', what, err);
            return;
          }
        }
      }
    } catch (err) {
      log('%s stopped: %O', what, err);
    }
  }

  /** For tests and diagnostics: how many background deletes are running. */
  get pendingBackgroundDeletes(): number {
    return this.backgroundDeletes.size;
  }
}

function hex(id: bigint): string {
  return `0x${id.toString(16)}`;
}

function validateVersion(version: unknown): number {
  if (version === undefined) return -1;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < -1 || version > 0x7fffffff) {
    throw new InvalidArgumentError(`version must be an integer from -1 to 2^31-1, got ${String(version)}`);
  }
  return version;
}

function validateTtl(ttlMs: unknown): number {
  if (typeof ttlMs !== 'number' || !Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_TTL_MS) {
    throw new InvalidArgumentError(`ttlMs must be an integer from 1 to ${MAX_TTL_MS} for the TTL modes, got ${String(ttlMs)}`);
  }
  return ttlMs;
}

function validateAcl(acl: unknown): void {
  if (!Array.isArray(acl) || acl.length === 0) throw new InvalidArgumentError('acl must be a non-empty array of { perms, scheme, id }');
  for (const a of acl) {
    if (
      typeof a !== 'object' ||
      a === null ||
      !Number.isInteger(a.perms) ||
      a.perms < 0 ||
      a.perms > 31 ||
      typeof a.scheme !== 'string' ||
      typeof a.id !== 'string'
    ) {
      throw new InvalidArgumentError('each ACL entry must be { perms: 0..31, scheme: string, id: string }');
    }
  }
}

/** Creates `path` and every missing ancestor; an existing node is fine. */
async function mkdirs(t: Transport, path: string, mode: 'PERSISTENT' | 'CONTAINER'): Promise<void> {
  const parts = path.split('/').filter(Boolean);
  let current = '';
  for (const part of parts) {
    current += `/${part}`;
    try {
      await t.create(current, Buffer.alloc(0), mode);
    } catch (err) {
      if (!isZkError(err, 'NODEEXISTS')) throw err;
    }
  }
}

/** Deletes a node, its children first when `recursive`; NONODE on a child is fine. */
async function deleteNode(t: Transport, path: string, version: number, recursive: boolean): Promise<void> {
  for (let round = 0; ; round++) {
    if (recursive) {
      let children: string[];
      try {
        ({ children } = await t.getChildren(path));
      } catch (err) {
        // Gone since an earlier round (someone else deleted it, or the server reaped a container): done.
        if (round > 0 && isZkError(err, 'NONODE')) return;
        throw err;
      }
      for (const child of children) {
        try {
          await deleteNode(t, joinPath(path, child), -1, true);
        } catch (err) {
          if (!isZkError(err, 'NONODE')) throw err;
        }
      }
    }
    try {
      await t.delete(path, version);
      return;
    } catch (err) {
      // It stood when we listed it: someone else deleted it meanwhile (or the server reaped an emptied container).
      if (recursive && isZkError(err, 'NONODE')) return;
      // A child appeared while we deleted the others: go round again.
      if (!(recursive && isZkError(err, 'NOTEMPTY'))) throw err;
    }
  }
}

