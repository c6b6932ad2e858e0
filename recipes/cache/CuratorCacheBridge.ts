import { EventEmitter } from 'node:events';
import debug from 'debug';
import { emitSafely, validateBoolean, validateOptions, type ZkClient } from '../../src/recipeKit';
import { CuratorCache, type CacheWaitOptions } from './CuratorCache';
import type { CacheFilter } from './CacheScope';

const log = debug('zk-recipes:cache:bridge');

/** Options of the bridges (NodeCache, PathChildrenCache). */
export interface CuratorCacheBridgeOptions {
  /** Keep the data (default), or the stats only (Curator's `cacheData`). */
  cacheData?: boolean;
}

/**
 * What NodeCache and PathChildrenCache share, as Curator's CuratorCache bridges do: a CuratorCache
 * underneath, of a given depth, whose events the bridge translates into its own. Its lifecycle is
 * the cache's: `start()`, `waitForInitialized()`, `close()`.
 */
export abstract class CuratorCacheBridge<E extends Record<keyof E, unknown[]>> extends EventEmitter<E> implements AsyncDisposable {
  /** The CuratorCache underneath. */
  readonly cache: CuratorCache;

  protected constructor(client: ZkClient, path: string, options: CuratorCacheBridgeOptions, scope: { maxDepth: number; keepData: (cacheData: boolean) => CacheFilter }) {
    super();
    const o = validateOptions(options, 'options');
    const cacheData = o.cacheData === undefined ? true : validateBoolean(o.cacheData, 'cacheData');
    this.cache = new CuratorCache(client, path, { maxDepth: scope.maxDepth, filter: scope.keepData(cacheData) });
  }

  get path(): string {
    return this.cache.path;
  }

  /** Starts watching. Starts once. */
  start(): void {
    this.cache.start();
  }

  /** As CuratorCache's: resolves once the first load is done. */
  async waitForInitialized(options?: CacheWaitOptions): Promise<void> {
    await this.cache.waitForInitialized(options);
  }

  async close(): Promise<void> {
    await this.cache.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Emits to each listener inside a try (see emitSafely). */
  protected emitSafely<K extends keyof E & string>(event: K, ...args: E[K]): void {
    emitSafely(this, event, args, (format, ...values) => log(`%s: ${format}`, this.cache.path, ...values));
  }
}

/** @deprecated Renamed CuratorCacheBridge, Curator's name for it; this alias goes in the next major release. */
export const CacheBridge = CuratorCacheBridge;
/** @deprecated Renamed CuratorCacheBridge, Curator's name for it; this alias goes in the next major release. */
export type CacheBridge<E extends Record<keyof E, unknown[]>> = CuratorCacheBridge<E>;
/** @deprecated Renamed CuratorCacheBridgeOptions; this alias goes in the next major release. */
export type CacheBridgeOptions = CuratorCacheBridgeOptions;
