/**
 * The seam between a cache and the source of its change notifications. Two sources fit it:
 * - one-shot watches on every node (OneShotTreeWatcher, the native transport's only way), which
 *   read each node as they watch it, and so report nodes with their data;
 * - a persistent recursive watch on the root (the protocol transport's addWatch), which reports
 *   paths without data, and may miss events across a reconnect: it then asks for a rebuild.
 */
import type { NodeData, ZkClient } from '../../src/recipeKit';
import type { CacheScope } from './CacheScope';

/** What a tree watcher tells its cache. The cache never throws from these. */
export interface TreeWatcherSink {
  /**
   * `path` was created or changed. `node` is its data and stat as read after the change, when the
   * watcher read it; without it, the cache reads the node.
   */
  changed(path: string, node?: NodeData): void;
  /** `path` was deleted, and its subtree with it. */
  deleted(path: string): void;
  /**
   * Events may have been missed (a persistent watch set again after a reconnect): the cache reads
   * the whole tree again and reports only the differences. Resolves when it has.
   */
  rebuild(): Promise<void>;
  /** The first look at the tree is done: every node found has been reported. */
  initialized(): void;
  /** A read failed; the watcher tries again. */
  error(err: unknown): void;
}

/** A source of change notifications for one subtree. */
export interface TreeWatcher {
  /** Starts watching (and reading) the tree; reports go to the sink. */
  start(): void;
  /** Stops watching; no more reports. */
  close(): Promise<void>;
}

/** Builds the tree watcher of a cache. */
export type TreeWatcherFactory = (client: ZkClient, scope: CacheScope, sink: TreeWatcherSink) => TreeWatcher;
