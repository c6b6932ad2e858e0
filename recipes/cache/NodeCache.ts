import { EventEmitter } from 'node:events';
import debug from 'debug';
import { emitSafely } from '../../src/util/events';
import type { ZkClient } from '../../src/client/ZkClient';
import { validateBoolean, validateOptions } from '../../src/validate';
import type { ChildData } from './ChildData';
import { CuratorCache, type CacheWaitOptions } from './CuratorCache';

const log = debug('zk-recipes:cache:node');

/** Options of a NodeCache. */
export interface NodeCacheOptions {
  /** Keep the node's data (default), or its stat only. */
  cacheData?: boolean;
}

/** The events of a NodeCache. */
export interface NodeCacheEvents {
  /** The node was created, changed or deleted: its new state (undefined: it does not exist). Curator's `nodeChanged`. */
  nodeChanged: [node: ChildData | undefined];
  /** The first read is done. */
  initialized: [];
  /** A read failed (it is tried again). Emitted only when someone listens. */
  error: [err: unknown];
}

/**
 * One node, kept in memory: Curator's NodeCache as its CuratorCache bridge makes it, a CuratorCache
 * of depth 0 whose events all become `nodeChanged`. The node need not exist: it is watched for its
 * creation. See CuratorCache for the guarantees, and the behaviour on SUSPENDED and LOST (the node
 * is read again after a reconnect that could not keep the watch, or in a new session, and
 * `nodeChanged` fires only if it differs).
 *
 * @example
 * ```ts
 * await using config = new NodeCache(client, '/config/flags');
 * config.on('nodeChanged', (node) => apply(node?.data));
 * config.start();
 * await config.waitForInitialized({ timeoutMs: 10_000 });
 * ```
 */
export class NodeCache extends EventEmitter<NodeCacheEvents> implements AsyncDisposable {
  /** The CuratorCache underneath. */
  readonly cache: CuratorCache;

  constructor(client: ZkClient, path: string, options: NodeCacheOptions = {}) {
    super();
    const o = validateOptions(options, 'options');
    const cacheData = o.cacheData === undefined ? true : validateBoolean(o.cacheData, 'cacheData');
    this.cache = new CuratorCache(client, path, { maxDepth: 0, filter: () => (cacheData ? 'data' : 'stat') });
    const changed = () => this.emitSafely('nodeChanged', this.getCurrentData());
    this.cache.on('created', changed).on('changed', changed).on('deleted', changed);
    this.cache.on('initialized', () => this.emitSafely('initialized'));
    this.cache.on('error', (err) => this.listenerCount('error') > 0 && this.emitSafely('error', err));
  }

  get path(): string {
    return this.cache.path;
  }

  /** Starts watching the node. Starts once. */
  start(): void {
    this.cache.start();
  }

  /** As CuratorCache's: resolves once the node has been read. */
  async waitForInitialized(options?: CacheWaitOptions): Promise<void> {
    await this.cache.waitForInitialized(options);
  }

  /** The node as held; undefined while it does not exist (or before the first read). */
  getCurrentData(): ChildData | undefined {
    return this.cache.get(this.cache.path);
  }

  async close(): Promise<void> {
    await this.cache.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private emitSafely<E extends keyof NodeCacheEvents>(event: E, ...args: NodeCacheEvents[E]): void {
    emitSafely(this, event, args, (format, ...values) => log(`%s: ${format}`, this.cache.path, ...values));
  }
}
