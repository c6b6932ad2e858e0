/** Helpers shared by the queue integration tests. */
import { isZkError, type ZkClient } from '../../../src';
import { timing } from '../../helpers';

/** Children of a node, sorted; none when it is gone. */
export async function childrenOf(client: ZkClient, path: string): Promise<string[]> {
  try {
    return (await client.getChildren(path)).sort();
  } catch (err) {
    if (isZkError(err, 'NONODE')) return [];
    throw err;
  }
}

/** A promise settled from outside: a handler blocked on it until the test lets it go. */
export class Gate<T = void> {
  readonly promise: Promise<T>;
  open!: (value: T) => void;
  fail!: (reason: unknown) => void;
  constructor() {
    this.promise = new Promise<T>((resolve, reject) => {
      this.open = resolve;
      this.fail = reject;
    });
  }
}

/** Records what consumers are given, and waits (bounded) for a number of them or for a match. */
export class Collector<T> {
  readonly items: T[] = [];
  private waiters: Array<{ test: () => boolean; resolve: () => void }> = [];

  add(item: T): void {
    this.items.push(item);
    for (const w of [...this.waiters]) {
      if (w.test()) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }

  /** Resolves once at least `count` items were recorded; rejects after `timeoutMs`. */
  waitForCount(count: number, timeoutMs = timing(20_000)): Promise<T[]> {
    return this.waitFor(() => this.items.length >= count, `${count} items`, timeoutMs).then(() => this.items.slice());
  }

  /** Resolves once `test` holds for the items so far; rejects after `timeoutMs`. */
  waitFor(test: () => boolean, what: string, timeoutMs = timing(20_000)): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`no ${what} within ${timeoutMs} ms; got ${this.items.length}: ${JSON.stringify(this.items.slice(-20))}`));
      }, timeoutMs);
      const waiter = {
        test,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.waiters.push(waiter);
    });
  }
}

/** Resolves once `signal` aborts, with its reason; rejects after `timeoutMs`. */
export function abortedWith(signal: AbortSignal, timeoutMs = timing(20_000)): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`signal not aborted within ${timeoutMs} ms`)), timeoutMs);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(signal.reason);
    });
  });
}
