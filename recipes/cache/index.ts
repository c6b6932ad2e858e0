/** Caches: CuratorCache, and NodeCache and PathChildrenCache as thin layers over it. */
export { CuratorCache, CURATOR_CACHE_DEFAULTS, type CuratorCacheOptions, type CuratorCacheEvents, type CacheWaitOptions, type CacheEventsOptions } from './CuratorCache';
export type { CuratorCacheEvent } from './CacheEventStream';
export type { ChildData } from './ChildData';
export type { CacheFilter, CacheFilterDecision, CacheScope } from './CacheScope';
export type { TreeWatcher, TreeWatcherSink, TreeWatcherFactory } from './TreeWatcher';
export { OneShotTreeWatcher } from './OneShotTreeWatcher';
export { PersistentTreeWatcher } from './PersistentTreeWatcher';
export { CacheTimeoutError } from './errors';
export { CuratorCacheBridge, CacheBridge, type CuratorCacheBridgeOptions, type CacheBridgeOptions } from './CuratorCacheBridge';
export { NodeCache, type NodeCacheOptions, type NodeCacheEvents } from './NodeCache';
export { PathChildrenCache, type PathChildrenCacheOptions, type PathChildrenCacheEvents } from './PathChildrenCache';
