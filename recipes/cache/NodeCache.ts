import type { ZkClient } from '../../src/recipeKit';
import { CuratorCacheBridge, type CuratorCacheBridgeOptions } from './CuratorCacheBridge';
import type { ChildData } from './ChildData';

/** Options of a NodeCache: `cacheData`, keep the node's data (default), or its stat only. */
export type NodeCacheOptions = CuratorCacheBridgeOptions;

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
export class NodeCache extends CuratorCacheBridge<NodeCacheEvents> {
  constructor(client: ZkClient, path: string, options: NodeCacheOptions = {}) {
    super(client, path, options, { maxDepth: 0, keepData: (cacheData) => () => (cacheData ? 'data' : 'stat') });
    const changed = () => this.emitSafely('nodeChanged', this.getCurrentData());
    this.cache.on('created', changed).on('changed', changed).on('deleted', changed);
    this.cache.on('initialized', () => this.emitSafely('initialized'));
    this.cache.on('error', (err) => this.listenerCount('error') > 0 && this.emitSafely('error', err));
  }

  /** The node as held; undefined while it does not exist (or before the first read). */
  getCurrentData(): ChildData | undefined {
    return this.cache.get(this.cache.path);
  }
}
