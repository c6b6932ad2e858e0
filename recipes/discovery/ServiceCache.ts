import { EventEmitter } from 'node:events';
import debug from 'debug';
import { abortReason, type ConnectionState, emitSafely, IllegalStateError, joinPath, validateOptions, validateSignal, validateTimeout, type ZkClient } from '../../src/recipeKit';
import type { ChildData } from '../cache/ChildData';
import { PathChildrenCache } from '../cache/PathChildrenCache';
import type { JsonInstanceSerializer } from './JsonInstanceSerializer';
import { validateNodeName, type ServiceInstance, type ServicePayload } from './ServiceInstance';

const log = debug('zk-recipes:discovery:cache');

/** What a ServiceCache needs of its discovery: where the services are and how to read them. */
export interface ServiceCacheSource {
  /** The client the cache reads with. */
  readonly client: ZkClient;
  /** The services' parent: the cache watches `<basePath>/<name>`. */
  readonly basePath: string;
  /** Reads each instance's JSON. */
  readonly serializer: JsonInstanceSerializer;
}

/** Options of `ServiceCache.start()`. */
export interface ServiceCacheStartOptions {
  /** Reject with CacheTimeoutError when the first load takes longer; the cache is then closed. */
  timeoutMs?: number;
  /** Abort the wait: it rejects with `signal.reason`, and the cache is closed. */
  signal?: AbortSignal;
}

/** Options of `ServiceCache.changes()`. */
export interface ServiceCacheChangesOptions {
  /** Ends the iteration: the pending `next()` rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** The events of a ServiceCache. */
export interface ServiceCacheEvents {
  /** The instances changed (one was registered, updated or unregistered), after the first load: Curator's `cacheChanged`. */
  changed: [instances: ServiceInstance<ServicePayload>[]];
  /** The client's connection state changed (Curator's ServiceCacheListener hears these too). */
  stateChanged: [state: ConnectionState];
  /** A node under the service holds no instance (it is left out), or a read failed (it is tried again). Emitted only when someone listens. */
  error: [err: unknown];
  /** The cache closed. */
  closed: [];
}

type Lifecycle = 'LATENT' | 'STARTED' | 'CLOSED';

/**
 * The instances of one service, kept in memory and up to date: Curator's ServiceCache. Under it a
 * PathChildrenCache of `<basePath>/<name>` (a CuratorCache of depth 1) reads each instance's node;
 * each node's JSON is read into a ServiceInstance once per change, not per `getInstances()`.
 *
 * - **Instances.** `getInstances()` is the list as last seen, sorted by node name (so a
 *   round-robin over it is stable); a node that does not hold an instance's JSON is left out
 *   and reported to 'error'. The service's node need not exist.
 * - **Changes.** The 'changed' event, with the new list, for each change after the first load
 *   (Curator's `cacheChanged`), and `changes()`, an async iterator of lists: the list once
 *   loaded, then the list after each change; while the consumer is busy, changes merge into the
 *   latest list, so memory does not grow with the rate of changes.
 * - **SUSPENDED and LOST.** The cache keeps its last list, as Curator's does: instances are not
 *   dropped because this client lost its connection (they may be stale meanwhile). After a
 *   reconnect that could not keep the watches, or in a new session, the service is read again
 *   and only the differences are reported. The client's states are passed on to 'stateChanged'.
 * - Unlike Curator's, starting does not create the service's node (a container) first: it reads
 *   the service whether or not it exists, and writes nothing.
 *
 * @example
 * ```ts
 * await using cache = discovery.serviceCache('billing');
 * cache.on('changed', (instances) => pool.resize(instances.length));
 * await cache.start({ timeoutMs: 10_000 });
 * for await (const instances of cache.changes({ signal })) console.log(instances.map((i) => i.id));
 * ```
 */
export class ServiceCache extends EventEmitter<ServiceCacheEvents> implements AsyncDisposable {
  /** The service's name. */
  readonly name: string;
  /** The service's node: `<basePath>/<name>`. */
  readonly path: string;
  private readonly client: ZkClient;
  private readonly serializer: JsonInstanceSerializer;
  private readonly children: PathChildrenCache;
  /** The instances, by node name. */
  private readonly instances = new Map<string, ServiceInstance<ServicePayload>>();
  private sorted: ServiceInstance<ServicePayload>[] | undefined;
  /** Bumped on each change once loaded (1 when loaded): an iterator has seen the list up to its own count. */
  private version = 0;
  private readonly wakers = new Set<() => void>();
  private lifecycle: Lifecycle = 'LATENT';
  private closed: Promise<void> | undefined;
  private readonly onState = (state: ConnectionState) => this.emitSafely('stateChanged', state);

  /**
   * Prefer `discovery.serviceCache(name)`, which closes the cache with the discovery.
   *
   * @throws InvalidArgumentError for a bad name (before any I/O).
   */
  constructor(discovery: ServiceCacheSource, name: string) {
    super();
    this.name = validateNodeName(name, 'name');
    this.client = discovery.client;
    this.serializer = discovery.serializer;
    this.path = joinPath(discovery.basePath, this.name);
    this.children = new PathChildrenCache(this.client, this.path);
    this.children.on('childAdded', (child) => this.put(child));
    this.children.on('childUpdated', (child) => this.put(child));
    this.children.on('childRemoved', (child) => this.drop(child));
    this.children.on('error', (err) => this.report(err));
  }

  /**
   * Starts watching the service and resolves once its instances are loaded, as Curator's
   * `start()`. Starts once. On timeout or abort the cache is closed.
   *
   * @throws InvalidArgumentError for bad options; IllegalStateError when the client is not started or the cache was started.
   */
  async start(options?: ServiceCacheStartOptions): Promise<void> {
    const o = validateOptions(options, 'options');
    const timeoutMs = validateTimeout(o.timeoutMs, 'timeoutMs');
    const signal = validateSignal(o.signal);
    if (signal?.aborted) throw abortReason(signal);
    if (this.lifecycle !== 'LATENT') throw new IllegalStateError(`a ServiceCache starts once (it is ${this.lifecycle})`, { path: this.path });
    this.children.start();
    this.lifecycle = 'STARTED';
    this.client.on('stateChanged', this.onState);
    try {
      await this.children.waitForInitialized({ timeoutMs, signal });
    } catch (err) {
      await this.close();
      throw err;
    }
    if (this.lifecycle !== 'STARTED') throw new IllegalStateError('the ServiceCache closed while starting', { path: this.path });
    this.version = 1;
    log('%s: loaded %d instances', this.path, this.instances.size);
    this.wake();
  }

  /** The service's instances as last seen, sorted by node name; [] before the first load and after close. */
  getInstances(): ServiceInstance<ServicePayload>[] {
    if (this.version === 0) return [];
    this.sorted ??= [...this.instances.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, instance]) => instance);
    return [...this.sorted];
  }

  /**
   * The lists of instances as an async iterator: the list once loaded, then the list after each
   * change (the changes that come while the consumer is busy merge into one list). It ends when
   * the cache closes; `signal` ends it by rejecting the pending `next()` with its reason.
   */
  changes(options?: ServiceCacheChangesOptions): AsyncGenerator<ServiceInstance<ServicePayload>[], void, undefined> {
    const signal = validateSignal(validateOptions(options, 'options').signal);
    return this.iterate(signal);
  }

  /** Stops watching; the list is emptied and iterators end. Idempotent. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.lifecycle = 'CLOSED';
      this.client.off('stateChanged', this.onState);
      this.wake();
      await this.children.close();
      this.instances.clear();
      this.sorted = undefined;
      this.version = 0;
      this.emitSafely('closed');
    })();
    return this.closed;
  }

  /** `close()`, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private put(child: ChildData): void {
    const node = child.path.slice(this.path.length + 1);
    let instance: ServiceInstance<ServicePayload>;
    try {
      instance = this.serializer.deserialize(child.data ?? Buffer.alloc(0), child.path);
    } catch (err) {
      // As Curator's cache, a node it cannot read is no instance; the others are still served.
      if (this.instances.delete(node)) this.changed();
      this.report(err);
      return;
    }
    this.instances.set(node, instance);
    this.changed();
  }

  private drop(child: ChildData): void {
    if (this.instances.delete(child.path.slice(this.path.length + 1))) this.changed();
  }

  private changed(): void {
    this.sorted = undefined;
    // Before the first load, start() reports the whole list at once.
    if (this.version === 0 || this.lifecycle !== 'STARTED') return;
    this.version++;
    this.wake();
    this.emitSafely('changed', this.getInstances());
  }

  private async *iterate(signal: AbortSignal | undefined): AsyncGenerator<ServiceInstance<ServicePayload>[], void, undefined> {
    let seen = 0;
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      if (this.lifecycle === 'CLOSED') return;
      if (this.version > seen) {
        seen = this.version;
        yield this.getInstances();
        continue;
      }
      await this.nextWake(signal);
    }
  }

  private nextWake(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.wakers.delete(waker);
        reject(abortReason(signal as AbortSignal));
      };
      const waker = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.wakers.add(waker);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private wake(): void {
    const wakers = [...this.wakers];
    this.wakers.clear();
    for (const waker of wakers) waker();
  }

  private report(err: unknown): void {
    log('%s: %s', this.path, String(err));
    if (this.lifecycle === 'STARTED' && this.listenerCount('error') > 0) this.emitSafely('error', err);
  }

  private emitSafely<E extends keyof ServiceCacheEvents & string>(event: E, ...args: ServiceCacheEvents[E]): void {
    emitSafely(this, event, args, (format, ...values) => log(`%s: ${format}`, this.path, ...values));
  }
}
