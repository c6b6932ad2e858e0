import type { ZkClient } from '../../src/recipeKit';
import { CuratorCacheBridge, type CuratorCacheBridgeOptions } from './CuratorCacheBridge';
import type { ChildData } from './ChildData';

/** Options of a PathChildrenCache: `cacheData`, keep the children's data (default), or their stats only. */
export type PathChildrenCacheOptions = CuratorCacheBridgeOptions;

/** The events of a PathChildrenCache: Curator's PathChildrenCacheEvent types. */
export interface PathChildrenCacheEvents {
  /** CHILD_ADDED: a child appeared (each child of the first load too). */
  childAdded: [child: ChildData];
  /** CHILD_UPDATED: a child's data changed. */
  childUpdated: [child: ChildData, previous: ChildData];
  /** CHILD_REMOVED: a child went. */
  childRemoved: [previous: ChildData];
  /** INITIALIZED: the first load is done; the children then held (Curator's `getInitialData`). */
  initialized: [children: ChildData[]];
  /** A read failed (it is tried again). Emitted only when someone listens. */
  error: [err: unknown];
}

/**
 * The children of one node, kept in memory: Curator's PathChildrenCache as its CuratorCache bridge
 * makes it, a CuratorCache of depth 1 whose events about the children become `childAdded`,
 * `childUpdated` and `childRemoved` (the parent's own are not passed on). The parent need not
 * exist. See CuratorCache for the guarantees, and the behaviour on SUSPENDED and LOST: after a
 * reconnect that could not keep the watches, or in a new session, the children are read again and
 * only the differences are reported. (Curator's bridge passes no connection events either; listen
 * to the client's `stateChanged` for those.)
 *
 * @example
 * ```ts
 * await using workers = new PathChildrenCache(client, '/services/workers');
 * workers.on('childAdded', (w) => pool.add(w.path)).on('childRemoved', (w) => pool.remove(w.path));
 * workers.start();
 * await workers.waitForInitialized({ timeoutMs: 10_000 });
 * ```
 */
export class PathChildrenCache extends CuratorCacheBridge<PathChildrenCacheEvents> {
  // The CuratorCache underneath also holds the parent, without its data.
  constructor(client: ZkClient, path: string, options: PathChildrenCacheOptions = {}) {
    super(client, path, options, { maxDepth: 1, keepData: (cacheData) => (p) => (p !== path && cacheData ? 'data' : 'stat') });
    const parent = this.cache.path;
    this.cache.on('created', (node) => node.path !== parent && this.emitSafely('childAdded', node));
    this.cache.on('changed', (node, previous) => node.path !== parent && this.emitSafely('childUpdated', node, previous));
    this.cache.on('deleted', (previous) => previous.path !== parent && this.emitSafely('childRemoved', previous));
    this.cache.on('initialized', () => this.emitSafely('initialized', this.getCurrentData()));
    this.cache.on('error', (err) => this.listenerCount('error') > 0 && this.emitSafely('error', err));
  }

  /** The children held, sorted by path. */
  getCurrentData(): ChildData[];
  /** The child at `fullPath`, if held. */
  getCurrentData(fullPath: string): ChildData | undefined;
  getCurrentData(fullPath?: string): ChildData[] | ChildData | undefined {
    if (fullPath === undefined) return this.cache.children(this.cache.path);
    return fullPath === this.cache.path ? undefined : this.cache.get(fullPath);
  }
}
