import debug from 'debug';
import type { WatchEvent, Watcher } from '../transport/Transport';

const log = debug('zk-recipes:cli:watch');

/** What a watch is set on: a node's children (getChildren), its data (getData) or its existence (exists). */
export type WatchKind = 'children' | 'data' | 'exists';

/**
 * The one-shot ZooKeeper watches of a live view (`zk-recipes watch`), at most one per node and
 * kind. A refresh that reads a node whose watch has not fired yet sets no second one, so watches
 * do not pile up while a view refreshes; a watch that fires, or a read that fails (and so set
 * none), makes room for the next.
 */
export class WatchSet {
  private readonly armed = new Set<string>();

  /** `onChange` hears every event; it must not throw. */
  constructor(private readonly onChange: (event: WatchEvent) => void) {}

  /** How many watches are set and have not fired. */
  get size(): number {
    return this.armed.size;
  }

  /**
   * Runs `read` with a watcher for (`kind`, `path`), or with none when that watch is already set.
   * A read that rejects set no watch (getData and getChildren on a missing node; `exists` resolves
   * null there, and its watch stays to report the creation).
   */
  async read<T>(kind: WatchKind, path: string, read: (watcher: Watcher | undefined) => Promise<T>): Promise<T> {
    const key = `${kind} ${path}`;
    if (this.armed.has(key)) return read(undefined);
    this.armed.add(key);
    const watcher: Watcher = (event) => {
      this.armed.delete(key);
      log('%s watch on %s: %s', kind, path, event.type);
      this.onChange(event);
    };
    try {
      return await read(watcher);
    } catch (err) {
      this.armed.delete(key);
      throw err;
    }
  }
}
