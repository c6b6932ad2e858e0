import { EventEmitter } from 'node:events';
import debug from 'debug';
import {
  abortReason,
  Deadline,
  emitSafely,
  IllegalStateError,
  type NodeData,
  TIMED_OUT,
  validateBoolean,
  validateClient,
  validateFunction,
  validateOptions,
  validateRecipePath,
  validateSignal,
  validateTimeout,
  waitFor,
  type ZkClient,
} from '../../src/recipeKit';
import { CacheEventStream, type CuratorCacheEvent } from './CacheEventStream';
import { CacheScope, type CacheFilter } from './CacheScope';
import { sameNode, type ChildData } from './ChildData';
import { CacheTimeoutError } from './errors';
import { OneShotTreeWatcher } from './OneShotTreeWatcher';
import { PersistentTreeWatcher } from './PersistentTreeWatcher';
import { TreeReader } from './TreeReader';
import type { TreeWatcher, TreeWatcherFactory, TreeWatcherSink } from './TreeWatcher';

const log = debug('zk-recipes:cache');

/** Options of a CuratorCache. Defaults are in `CURATOR_CACHE_DEFAULTS`. */
export interface CuratorCacheOptions {
  /** Chooses what is kept of each node: its data ('data', the default), its stat only ('stat'), or nothing below it ('exclude'). */
  filter?: CacheFilter;
  /** How deep below the root nodes are kept: 0 keeps the root only (Curator's SINGLE_NODE_CACHE); default no limit. */
  maxDepth?: number;
  /** Empty the cache on `close()` (Curator's default; DO_NOT_CLEAR_ON_CLOSE is `false`). */
  clearOnClose?: boolean;
  /**
   * The source of change notifications; by default one-shot watches on every node. For transports with persistent watches, and for tests.
   *
   * @internal The strategy seam: not in the published declarations.
   */
  treeWatcher?: TreeWatcherFactory;
}

/** The defaults of CuratorCacheOptions, frozen. */
export const CURATOR_CACHE_DEFAULTS = Object.freeze({
  maxDepth: Infinity,
  clearOnClose: true,
});

/** Options of `waitForInitialized`. */
export interface CacheWaitOptions {
  /** Reject with CacheTimeoutError after this long; undefined waits as long as it takes. */
  timeoutMs?: number;
  /** Abort the wait: it rejects with `signal.reason`. */
  signal?: AbortSignal;
}

/** Options of `events()`. */
export interface CacheEventsOptions {
  /** Ends the iteration: the pending `next()` rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** The events of a CuratorCache. */
export interface CuratorCacheEvents {
  /** A node entered the cache. */
  created: [node: ChildData];
  /** A node in the cache changed (its data, or it was deleted and created again). */
  changed: [node: ChildData, previous: ChildData];
  /** A node left the cache. */
  deleted: [previous: ChildData];
  /** The first load is done: the cache holds every node found. Once. */
  initialized: [];
  /** A read failed (it is tried again after a back-off). Emitted only when someone listens. */
  error: [err: unknown];
}

/**
 * The tree watcher for a client: one persistent recursive watch where the transport has them (the
 * protocol transport), else one-shot watches on every node (the native binding).
 */
function defaultTreeWatcher(client: ZkClient, scope: CacheScope, sink: TreeWatcherSink): TreeWatcher {
  return client.supports('addWatch') ? new PersistentTreeWatcher(client, scope, sink) : new OneShotTreeWatcher(client, scope, sink);
}

/**
 * An in-memory mirror of a subtree, like Curator's CuratorCache: the node at `path` and the nodes
 * below it, each with its stat and, if the filter keeps it, its data. It reads nothing of other
 * clients' making and writes nothing, so it works on any tree, Curator's recipes' included.
 *
 * - **Events.** `created`, `changed` (with the previous node), `deleted`, and `initialized` once
 *   the first load is done, as listeners (a listener that throws is logged, the others still
 *   hear) and as an async iterator, `events()`, which starts with the nodes already held. Each
 *   node's events are in order: `changed` and `deleted` only for a node held, `created` only for
 *   one not held. A node deleted and created again between two looks is one `changed`.
 * - **How it watches.** On the protocol transport: one persistent recursive watch on the root, as
 *   Curator's CuratorCache does (PersistentTreeWatcher), and a read of each node reported. On the
 *   native transport, which has no persistent watches: a one-shot watch on each node's data and
 *   children, as Curator's TreeCache does (OneShotTreeWatcher). Both sit behind one seam
 *   (TreeWatcher).
 * - **SUSPENDED.** The cache keeps what it holds; it may be stale while disconnected. When the
 *   connection comes back in the same session, the server fires the watches of what changed.
 * - **LOST, and reconnects that could not keep the watches.** Every node is read again (in the new
 *   session), and only the differences are reported: nodes gone are `deleted`, nodes changed
 *   `changed`, nodes new `created`; a node that did not change is not reported.
 * - **Memory** is bounded by the tree: per node held, its path, its stat and (if kept) its data,
 *   and, with one-shot watches, two watches (a few hundred bytes); an iterator holds at most one
 *   pending event per path (changes merge while it lags), never a queue of every change. The
 *   filter (`'stat'`, `'exclude'`) and `maxDepth` bound what is held.
 *
 * @example
 * ```ts
 * await using cache = new CuratorCache(client, '/config');
 * cache.on('changed', (node) => reload(node.path, node.data));
 * cache.start();
 * await cache.waitForInitialized({ timeoutMs: 10_000 });
 * const current = cache.get('/config/limits')?.data;
 * for await (const event of cache.events({ signal })) console.log(event.type);
 * ```
 */
export class CuratorCache extends EventEmitter<CuratorCacheEvents> implements AsyncDisposable {
  readonly client: ZkClient;
  readonly path: string;
  private readonly scope: CacheScope;
  private readonly clearOnClose: boolean;
  private readonly storage = new Map<string, ChildData>();
  private readonly streams = new Set<CacheEventStream>();
  private readonly makeWatcher: () => TreeWatcher;
  private watcher: TreeWatcher | undefined;
  private readonly reader: TreeReader;
  private lifecycle: 'LATENT' | 'STARTED' | 'CLOSED' = 'LATENT';
  private initializedFlag = false;
  private readonly waiters = new Set<() => void>();
  private closed: Promise<void> | undefined;

  constructor(client: ZkClient, path: string, options: CuratorCacheOptions = {}) {
    super();
    this.client = validateClient(client, 'CuratorCache');
    this.path = validateRecipePath(this.client, path, 'cache');
    const o = validateOptions(options, 'options');
    this.scope = new CacheScope(this.path, o.filter, o.maxDepth);
    this.clearOnClose = o.clearOnClose === undefined ? CURATOR_CACHE_DEFAULTS.clearOnClose : validateBoolean(o.clearOnClose, 'clearOnClose');
    const factory = o.treeWatcher === undefined ? defaultTreeWatcher : validateFunction(o.treeWatcher, 'treeWatcher');
    this.reader = new TreeReader(this.client, this.scope, {
      read: (p, node) => (node === null ? this.remove(p) : this.apply(p, node)),
      paths: () => this.storage.keys(),
      error: (err) => this.report(err),
    });
    // Made at start(): the client's transport, which decides the kind of watches, exists from then.
    this.makeWatcher = () => factory(this.client, this.scope, {
      changed: (p, node) => {
        if (this.lifecycle !== 'STARTED') return;
        if (node === undefined) this.reader.read(p);
        else this.apply(p, node);
      },
      deleted: (p) => this.remove(p),
      rebuild: () => this.reader.rebuild(),
      initialized: () => this.markInitialized(),
      error: (err) => this.report(err),
    });
  }

  /** Starts watching and loading the tree, in the background. The client must be started. A cache starts once. */
  start(): void {
    if (this.lifecycle !== 'LATENT') throw new IllegalStateError(`a CuratorCache starts once (it is ${this.lifecycle})`, { path: this.path });
    if (!this.client.isStarted) throw new IllegalStateError('the client is not started: call client.start() first', { path: this.path });
    this.lifecycle = 'STARTED';
    this.watcher = this.makeWatcher();
    this.watcher.start();
  }

  /** Whether the first load is done. */
  get isInitialized(): boolean {
    return this.initializedFlag;
  }

  /**
   * Resolves once the first load is done, at once if it is. Rejects with CacheTimeoutError when
   * `timeoutMs` passes first, with `signal.reason` on abort, and with IllegalStateError when the
   * cache is not started or closes.
   */
  async waitForInitialized(options?: CacheWaitOptions): Promise<void> {
    const o = validateOptions(options, 'options');
    const timeoutMs = validateTimeout(o.timeoutMs, 'timeoutMs');
    const signal = validateSignal(o.signal);
    if (signal?.aborted) throw abortReason(signal);
    for (;;) {
      if (this.lifecycle !== 'STARTED') throw new IllegalStateError(`the CuratorCache is ${this.lifecycle === 'LATENT' ? 'not started' : 'closed'}`, { path: this.path });
      if (this.initializedFlag) return;
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      this.waiters.add(wake);
      try {
        const outcome = await waitFor(woken, { deadline: Deadline.after(timeoutMs), signal });
        if (outcome === TIMED_OUT) throw new CacheTimeoutError(`the cache of ${this.path} did not finish loading within ${timeoutMs} ms`, { path: this.path });
      } finally {
        this.waiters.delete(wake);
      }
    }
  }

  /** The node at `path` as held, if it is. */
  get(path: string): ChildData | undefined {
    return this.storage.get(path);
  }

  /** How many nodes are held. */
  get size(): number {
    return this.storage.size;
  }

  /** The nodes held, in no particular order. */
  nodes(): IterableIterator<ChildData> {
    return this.storage.values();
  }

  [Symbol.iterator](): IterableIterator<ChildData> {
    return this.nodes();
  }

  /** The held children of `path` (its direct children only), sorted by path. */
  children(path: string): ChildData[] {
    const prefix = path === '/' ? '/' : `${path}/`;
    const found: ChildData[] = [];
    for (const node of this.storage.values()) {
      if (node.path.length > prefix.length && node.path.startsWith(prefix) && node.path.indexOf('/', prefix.length) < 0) found.push(node);
    }
    return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /**
   * The cache's events as an async iterator: first a `created` for each node held (and
   * `initialized` if the first load is done), then each change. While the consumer is busy, the
   * changes of a path it has not taken yet merge into one event. It ends when the cache closes;
   * `signal` ends it by rejecting the pending `next()` with its reason.
   */
  events(options?: CacheEventsOptions): AsyncGenerator<CuratorCacheEvent, void, undefined> {
    const signal = validateSignal(validateOptions(options, 'options').signal);
    return this.iterate(signal);
  }

  /** Stops watching. The cache is emptied, unless `clearOnClose` is false. Idempotent. */
  close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ---------------------------------------------------------------- the mirror

  private apply(path: string, node: NodeData): void {
    if (this.lifecycle !== 'STARTED') return;
    const decision = this.scope.decideFromEvent(path);
    if (decision === 'exclude') return;
    this.reader.noted(path);
    const previous = this.storage.get(path);
    if (previous !== undefined) {
      if (sameNode(previous, node)) return;
      // An older reading of the same node, answered late: keep the newer one.
      if (previous.stat.czxid === node.stat.czxid && previous.stat.mzxid > node.stat.mzxid) return;
    }
    const held: ChildData = { path, stat: node.stat, data: decision === 'data' ? node.data : undefined };
    this.storage.set(path, held);
    if (previous === undefined) this.publish('created', path, undefined, held);
    else this.publish('changed', path, previous, held);
  }

  private remove(path: string): void {
    if (this.lifecycle !== 'STARTED') return;
    const previous = this.storage.get(path);
    if (previous === undefined) return;
    this.storage.delete(path);
    this.publish('deleted', path, previous, undefined);
  }

  private markInitialized(): void {
    if (this.initializedFlag || this.lifecycle !== 'STARTED') return;
    this.initializedFlag = true;
    log('%s: initialized with %d nodes', this.path, this.storage.size);
    for (const stream of this.streams) stream.initialized();
    for (const wake of [...this.waiters]) wake();
    this.emitSafely('initialized');
  }

  private publish(type: 'created' | 'changed' | 'deleted', path: string, previous: ChildData | undefined, node: ChildData | undefined): void {
    for (const stream of this.streams) stream.push(path, previous, node);
    if (type === 'created') this.emitSafely('created', node as ChildData);
    else if (type === 'changed') this.emitSafely('changed', node as ChildData, previous as ChildData);
    else this.emitSafely('deleted', previous as ChildData);
  }

  // ---------------------------------------------------------------- lifecycle and events

  private async *iterate(signal: AbortSignal | undefined): AsyncGenerator<CuratorCacheEvent, void, undefined> {
    if (signal?.aborted) throw abortReason(signal);
    const stream = new CacheEventStream(this.storage.values(), this.initializedFlag);
    if (this.lifecycle === 'CLOSED') stream.end();
    this.streams.add(stream);
    try {
      for (;;) {
        const event = await stream.take(signal);
        if (event === undefined) return;
        yield event;
      }
    } finally {
      this.streams.delete(stream);
    }
  }

  private async shutdown(): Promise<void> {
    const started = this.lifecycle === 'STARTED';
    this.lifecycle = 'CLOSED';
    for (const stream of this.streams) stream.end();
    for (const wake of [...this.waiters]) wake();
    this.reader.close();
    if (started) await this.watcher?.close();
    if (this.clearOnClose) this.storage.clear();
  }

  private report(err: unknown): void {
    if (this.lifecycle !== 'STARTED') return;
    log('%s: %s', this.path, String(err));
    if (this.listenerCount('error') > 0) this.emitSafely('error', err);
  }

  private emitSafely<E extends keyof CuratorCacheEvents>(event: E, ...args: CuratorCacheEvents[E]): void {
    emitSafely(this, event, args, (format, ...values) => log(`%s: ${format}`, this.path, ...values));
  }
}
