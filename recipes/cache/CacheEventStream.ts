import { abortReason } from '../../src/recipeKit';
import type { ChildData } from './ChildData';

/** What a cache reports: a node created, changed or deleted, or the end of its first load. */
export type CuratorCacheEvent =
  | { readonly type: 'created'; readonly node: ChildData }
  | { readonly type: 'changed'; readonly node: ChildData; readonly previous: ChildData }
  | { readonly type: 'deleted'; readonly previous: ChildData }
  | { readonly type: 'initialized' };

const INITIALIZED = Symbol('initialized');

/** A path's pending change: what the consumer last saw there (`from`) and what is there now (`to`). */
interface Pending {
  readonly from: ChildData | undefined;
  to: ChildData | undefined;
}

/**
 * The events of one iterator over a cache, with memory bounded by the tree, not by the rate of
 * changes: while the consumer is busy, changes to a path it has not taken yet merge into one
 * (created then changed is one `created` with the last data; created then deleted is nothing;
 * changed then changed is one `changed` from what it last saw). Paths keep the order of their
 * first pending change; `initialized` keeps its place among them. So at most one event waits per
 * path, and applying the events in order to a map gives the cache's contents.
 */
export class CacheEventStream {
  private readonly pending = new Map<string | typeof INITIALIZED, Pending | undefined>();
  private taker: (() => void) | undefined;
  private ended = false;

  constructor(seed: Iterable<ChildData>, initialized: boolean) {
    for (const node of seed) this.pending.set(node.path, { from: undefined, to: node });
    if (initialized) this.pending.set(INITIALIZED, undefined);
  }

  /** A node changed from `from` to `to` (undefined: absent). */
  push(path: string, from: ChildData | undefined, to: ChildData | undefined): void {
    if (this.ended) return;
    const waiting = this.pending.get(path);
    if (waiting === undefined) this.pending.set(path, { from, to });
    else if (waiting.from === undefined && to === undefined) this.pending.delete(path);
    else waiting.to = to;
    this.wake();
  }

  initialized(): void {
    if (this.ended) return;
    this.pending.set(INITIALIZED, undefined);
    this.wake();
  }

  /** No more events: a pending `take` resolves undefined. */
  end(): void {
    this.ended = true;
    this.pending.clear();
    this.wake();
  }

  /** The next event; undefined once ended. Rejects with the signal's reason when it aborts. */
  async take(signal: AbortSignal | undefined): Promise<CuratorCacheEvent | undefined> {
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      const event = this.shift();
      if (event !== undefined || this.ended) return event;
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          this.taker = undefined;
          reject(abortReason(signal as AbortSignal));
        };
        this.taker = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    }
  }

  private shift(): CuratorCacheEvent | undefined {
    for (const [key, change] of this.pending) {
      this.pending.delete(key);
      if (key === INITIALIZED) return { type: 'initialized' };
      const { from, to } = change as Pending;
      if (from === undefined && to !== undefined) return { type: 'created', node: to };
      if (from !== undefined && to === undefined) return { type: 'deleted', previous: from };
      if (from !== undefined && to !== undefined && from !== to) return { type: 'changed', node: to, previous: from };
    }
    return undefined;
  }

  private wake(): void {
    const taker = this.taker;
    this.taker = undefined;
    taker?.();
  }
}
