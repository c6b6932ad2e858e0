import { EventEmitter, setMaxListeners } from 'node:events';
import debug from 'debug';
import {
  abortReason,
  type ConnectionState,
  type CreateMode,
  Deadline,
  emitSafely,
  IllegalStateError,
  isZkError,
  type NodeData,
  NodeWatch,
  StepLoop,
  subscribe,
  TIMED_OUT,
  toData,
  validateBoolean,
  validateClient,
  validateOptions,
  validateRecipePath,
  validateSignal,
  validateTimeout,
  waitFor,
  type ZkClient,
} from '../../src/recipeKit';
import { PersistentNodeTimeoutError } from './errors';

const log = debug('zk-recipes:nodes:persistent');

/** Options of a PersistentNode. Defaults are in `PERSISTENT_NODE_DEFAULTS`. */
export interface PersistentNodeOptions {
  /** How the node is created. Sequential modes are created sequentially once, then re-created under the name they got. */
  mode?: CreateMode;
  /** Curator's protection (`_c_<uuid>-` before the name) for the first create. */
  protected?: boolean;
  /** The node's data; the client's `defaultData` (the local IP address) when omitted. */
  data?: Buffer | Uint8Array | string;
  /** Time to live, for the TTL modes. */
  ttlMs?: number;
  /** Create missing parents as containers (Curator's `useParentCreation`). */
  createParents?: boolean;
}

/** The defaults of PersistentNodeOptions, frozen. */
export const PERSISTENT_NODE_DEFAULTS = Object.freeze({
  mode: 'EPHEMERAL' as CreateMode,
  protected: false,
  createParents: true,
});

/** Options of the waits of a PersistentNode. */
export interface PersistentNodeWaitOptions {
  /** Reject with PersistentNodeTimeoutError after this long; undefined waits as long as it takes. */
  timeoutMs?: number;
  /** Abort the wait: it rejects with `signal.reason`. */
  signal?: AbortSignal;
}

/** The events of a PersistentNode. */
export interface PersistentNodeEvents {
  /** The node was created (the first time, or again after it went): its path. Curator's `nodeCreated`. */
  created: [path: string];
  /** A step failed (it is tried again after a back-off): a refused create (NOAUTH), a missing parent. Emitted only when someone listens. */
  error: [err: unknown];
}

const NON_SEQUENTIAL: Partial<Record<CreateMode, CreateMode>> = {
  EPHEMERAL_SEQUENTIAL: 'EPHEMERAL',
  PERSISTENT_SEQUENTIAL: 'PERSISTENT',
  PERSISTENT_SEQUENTIAL_WITH_TTL: 'PERSISTENT_WITH_TTL',
};

type Lifecycle = 'LATENT' | 'STARTED' | 'CLOSED';

/** How long `close()` waits for the server to confirm the delete before leaving it to the background. */
const CLOSE_WAIT_MS = 1_000;

/**
 * A node that stays present through connection loss and session expiry, wire-compatible with
 * Curator's PersistentNode (and PersistentEphemeralNode): it is created at `start()`, re-created
 * with the same name and data whenever it goes, and deleted at `close()`.
 *
 * - **Names.** The first create uses `path` with the mode and, if asked, Curator's protection
 *   (`_c_<uuid>-`, found again after a lost reply); a sequential mode gets its number. Every
 *   re-create then creates that exact name with the mode's non-sequential form, as Curator does,
 *   so `actualPath` never changes. A re-create whose reply was lost finds its node by that name.
 * - **A node already there.** A create that finds the name taken takes the node over: it writes
 *   our data into it and watches it; when it goes (the ephemeral node of an ended session, of
 *   ours or another client's), ours is created.
 * - **Data** can be changed at any time with `setData`; the node gets it now if it exists, and
 *   every re-create uses it. Data written by others is left alone, as in Curator.
 * - **SUSPENDED.** Nothing is done: an ephemeral node lives as long as its session.
 * - **LOST.** An ephemeral node goes with its session. In the client's next session the node is
 *   read again; once the old session's node is gone (the client declares LOST a little before the
 *   server expires the session), it is re-created. A persistent node is only checked.
 * - `close()` deletes the node (guaranteed: retried in the background while disconnected), also
 *   one whose create was in flight; it resolves when the server confirms the delete, or within
 *   1 s with the delete left to the background. The client closing stops it; its ephemeral node goes with the
 *   session.
 * - It is an EventEmitter: `created` (each create), `error` (failed steps, retried after a back-off).
 *
 * @example
 * ```ts
 * await using node = new PersistentNode(client, '/services/api/instance-', { mode: 'EPHEMERAL_SEQUENTIAL', protected: true, data: JSON.stringify(me) });
 * node.start();
 * await node.waitForInitialCreate({ timeoutMs: 10_000 });
 * console.log('registered as', node.actualPath);
 * ```
 */
export class PersistentNode extends EventEmitter<PersistentNodeEvents> implements AsyncDisposable {
  readonly client: ZkClient;
  readonly basePath: string;
  readonly mode: CreateMode;
  private readonly useProtection: boolean;
  private readonly ttlMs: number | undefined;
  private readonly createParents: boolean;
  /** Whether close() deletes the node (PersistentTtlNode leaves it to its TTL). */
  private readonly deleteOnClose: boolean;
  private data: Buffer;
  /** setData calls so far, and how many of them the node has seen (written or created with). */
  private dataVersion = 0;
  private writtenVersion = 0;
  /** The node needs our data written into it (a setData, or a node taken over). */
  private writePending = false;
  private lifecycle: Lifecycle = 'LATENT';
  private node: string | undefined;
  private watch: NodeWatch | undefined;
  private initialCreated = false;
  private readonly waiters = new Set<() => void>();
  private readonly loop: StepLoop;
  private readonly closing = new AbortController();
  private stopListening: (() => void) | undefined;
  private closed: Promise<void> | undefined;

  constructor(client: ZkClient, path: string, options: PersistentNodeOptions = {}, internal: { deleteOnClose?: boolean } = {}) {
    super();
    this.client = validateClient(client, 'PersistentNode');
    const o = validateOptions(options, 'options');
    this.mode = o.mode ?? PERSISTENT_NODE_DEFAULTS.mode;
    this.basePath = validateRecipePath(this.client, path, 'persistent node');
    this.useProtection = o.protected === undefined ? PERSISTENT_NODE_DEFAULTS.protected : validateBoolean(o.protected, 'protected');
    this.createParents = o.createParents === undefined ? PERSISTENT_NODE_DEFAULTS.createParents : validateBoolean(o.createParents, 'createParents');
    this.data = o.data === undefined ? this.client.options.defaultData : toData(o.data);
    this.ttlMs = o.ttlMs;
    // Checks the mode, the TTL and the request's size as the first create will send it.
    this.client.validateCreate(this.basePath, { ...this.createOptions(this.mode), ttlMs: o.ttlMs, data: this.data });
    this.deleteOnClose = internal.deleteOnClose ?? true;
    setMaxListeners(Infinity, this.closing.signal);
    this.loop = new StepLoop(() => this.step(), { onError: (err, retryInMs) => this.report(err, retryInMs) });
  }

  /** Creates the node in the background and returns at once. The client must be started. A node starts once. */
  start(): void {
    if (this.lifecycle !== 'LATENT') throw new IllegalStateError(`a PersistentNode starts once (it is ${this.lifecycle})`, { path: this.basePath });
    if (!this.client.isStarted) throw new IllegalStateError('the client is not started: call client.start() first', { path: this.basePath });
    this.lifecycle = 'STARTED';
    this.stopListening = subscribe(this.client, 'stateChanged', (state) => this.onState(state));
    this.loop.kick();
  }

  /** The node's path (within the client's namespace) once created; undefined before. It stays the same while the node is re-created. */
  get actualPath(): string | undefined {
    return this.node;
  }

  /** The data the node is to hold. */
  getData(): Buffer {
    return this.data;
  }

  /**
   * Resolves once the first create (or the take-over of a node already there) is done, at once if
   * it is. Rejects with PersistentNodeTimeoutError when `timeoutMs` passes first, with
   * `signal.reason` on abort, and with IllegalStateError when the node is not started or closes.
   */
  async waitForInitialCreate(options?: PersistentNodeWaitOptions): Promise<void> {
    await this.waitUntil(() => this.initialCreated, options, 'the initial create');
  }

  /**
   * Changes the node's data: written now if the node exists, and used by every re-create.
   * Resolves once the node holds it (at once before `start()`); rejects with
   * PersistentNodeTimeoutError when `timeoutMs` passes first (the data is still written later).
   * Bad data rejects with InvalidArgumentError before anything changes.
   */
  async setData(data: Buffer | Uint8Array | string, options?: PersistentNodeWaitOptions): Promise<void> {
    const bytes = toData(data);
    this.client.validateCreate(this.basePath, { ...this.createOptions(this.mode), data: bytes });
    const o = validateOptions(options, 'options');
    validateTimeout(o.timeoutMs, 'timeoutMs');
    const signal = validateSignal(o.signal);
    if (signal?.aborted) throw abortReason(signal);
    if (this.lifecycle === 'CLOSED') throw new IllegalStateError('the PersistentNode is closed', { path: this.basePath });
    this.data = Buffer.from(bytes);
    const version = ++this.dataVersion;
    if (this.lifecycle === 'LATENT') {
      this.writtenVersion = version;
      return;
    }
    this.writePending = true;
    this.loop.kick();
    await this.waitUntil(() => this.writtenVersion >= version, options, 'writing the data');
  }

  /** Stops keeping the node and deletes it. Idempotent. */
  close(): Promise<void> {
    this.closed ??= this.shutdown(true);
    return this.closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ---------------------------------------------------------------- lifecycle

  private async shutdown(deleteNode: boolean): Promise<void> {
    const started = this.lifecycle === 'STARTED';
    this.lifecycle = 'CLOSED';
    this.wakeWaiters();
    if (!started) return;
    this.stopListening?.();
    this.loop.stop();
    // A create in flight is aborted; the client deletes the node it may still make.
    this.closing.abort(new IllegalStateError('the PersistentNode is closed', { path: this.basePath }));
    await this.loop.idle;
    await this.watch?.close();
    this.watch = undefined;
    const node = this.node;
    if (node === undefined || !deleteNode || !this.deleteOnClose) return;
    const deleting = this.client.delete(node, { guaranteed: true, quietly: true }).catch((err: unknown) => {
      log('%s: deleting %s failed, left to the background: %s', this.basePath, node, String(err));
    });
    // Connected, the delete is one round trip: wait for it, a bounded while (the connection can
    // drop meanwhile); disconnected, the guaranteed delete goes on in the background.
    if (this.client.isConnected) await waitFor(deleting, { deadline: Deadline.after(CLOSE_WAIT_MS) });
  }

  private onState(state: ConnectionState): void {
    if (this.lifecycle !== 'STARTED') return;
    // Curator creates again on RECONNECTED; the watch reads again itself when it could not keep its watch.
    if (state !== 'SUSPENDED') this.loop.kick();
  }

  private report(err: unknown, retryInMs: number): void {
    if (isZkError(err, 'CLIENT_CLOSED')) {
      void (this.closed ??= this.shutdown(false));
      return;
    }
    if (this.lifecycle !== 'STARTED') return;
    log('%s: step failed (node %s), again in %d ms: %s', this.basePath, this.node ?? '-', retryInMs, String(err));
    if (this.listenerCount('error') > 0) this.emitSafely('error', err);
  }

  // ---------------------------------------------------------------- keeping the node

  /** One look: create the node if it is missing, write our data if it is due. */
  private async step(): Promise<void> {
    if (this.lifecycle !== 'STARTED' || !this.client.isConnected) return;
    if (this.node === undefined) {
      await this.create(this.basePath, this.mode);
      return;
    }
    const node = this.node;
    const current = this.watch ? this.watch.value : await this.watchNode(node);
    if (this.lifecycle !== 'STARTED') return;
    if (current === undefined) return;
    if (current === null) {
      await this.create(node, NON_SEQUENTIAL[this.mode] ?? this.mode);
      return;
    }
    if (this.writePending) await this.writeData(node);
    else this.markInitial();
  }

  /** Creates the node; a name already taken is taken over (our data is written into it). */
  private async create(path: string, mode: CreateMode): Promise<void> {
    const version = this.dataVersion;
    const protect = this.useProtection && path === this.basePath;
    try {
      const created = await this.client.create(path, { ...this.createOptions(mode), data: this.data, protected: protect, signal: this.closing.signal });
      if (this.lifecycle !== 'STARTED') return;
      this.node = created;
      this.writtenVersion = Math.max(this.writtenVersion, version);
      this.writePending = this.writtenVersion < this.dataVersion;
      log('%s: created %s', this.basePath, created);
      this.markInitial();
      this.emitSafely('created', created);
      if (this.watch === undefined || this.watch.path !== created) {
        // Deleted before the watch's first read: no event will come for it, so look again now.
        if ((await this.watchNode(created)) === null) this.loop.kick();
      } else this.watch.refresh();
      if (this.writePending) this.loop.kick();
    } catch (err) {
      if (!isZkError(err, 'NODEEXISTS')) throw err;
      // Taken: take the node over, as Curator does (our data goes into it), and watch it.
      log('%s: %s exists; taking it over', this.basePath, path);
      this.node = path;
      this.writePending = true;
      if (this.watch === undefined || this.watch.path !== path) await this.watchNode(path);
      this.loop.kick();
    }
  }

  private async writeData(node: string): Promise<void> {
    const version = this.dataVersion;
    this.writePending = false;
    try {
      await this.client.setData(node, this.data, { signal: this.closing.signal });
    } catch (err) {
      this.writePending = true;
      // Gone meanwhile: the watch says so, and the next step creates it with the data.
      if (isZkError(err, 'NONODE')) return;
      throw err;
    }
    this.writtenVersion = Math.max(this.writtenVersion, version);
    this.markInitial();
  }

  /** Watches our node (and its creation while it is missing); every change makes a step. Resolves with the first read. */
  private async watchNode(node: string): Promise<NodeData | null | undefined> {
    const old = this.watch;
    this.watch = undefined;
    await old?.close();
    const watch = new NodeWatch(this.client, node, () => this.loop.kick(), {
      signal: this.closing.signal,
      onError: (err) => log('%s: reading %s failed, again later: %s', this.basePath, node, String(err)),
    });
    this.watch = watch;
    try {
      return await watch.start();
    } catch (err) {
      if (this.watch === watch) this.watch = undefined;
      throw err;
    }
  }

  private markInitial(): void {
    if (!this.initialCreated) {
      this.initialCreated = true;
      log('%s: initial create done (%s)', this.basePath, this.node);
    }
    this.wakeWaiters();
  }

  private createOptions(mode: CreateMode) {
    return { mode, ttlMs: mode.endsWith('_WITH_TTL') ? this.ttlMs : undefined, createParents: this.createParents ? ('container' as const) : undefined };
  }

  // ---------------------------------------------------------------- waits and events

  private async waitUntil(done: () => boolean, options: PersistentNodeWaitOptions | undefined, what: string): Promise<void> {
    const o = validateOptions(options, 'options');
    const timeoutMs = validateTimeout(o.timeoutMs, 'timeoutMs');
    const signal = validateSignal(o.signal);
    if (signal?.aborted) throw abortReason(signal);
    for (;;) {
      if (this.lifecycle !== 'STARTED') throw new IllegalStateError(`the PersistentNode is ${this.lifecycle === 'LATENT' ? 'not started' : 'closed'}`, { path: this.basePath });
      if (done()) return;
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      this.waiters.add(wake);
      try {
        const outcome = await waitFor(woken, { deadline: Deadline.after(timeoutMs), signal });
        if (outcome === TIMED_OUT) throw new PersistentNodeTimeoutError(`${what} at ${this.basePath} did not finish within ${timeoutMs} ms`, { path: this.basePath });
      } finally {
        this.waiters.delete(wake);
      }
    }
  }

  private wakeWaiters(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private emitSafely<E extends keyof PersistentNodeEvents>(event: E, ...args: PersistentNodeEvents[E]): void {
    emitSafely(this, event, args, (format, ...values) => log(`%s: ${format}`, this.basePath, ...values));
  }
}
