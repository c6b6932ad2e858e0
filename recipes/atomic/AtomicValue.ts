/** What an operation of an atomic value did, as Curator's AtomicValue and AtomicStats report it. */

/** How an operation went: how often and how long it tried, optimistically and under the lock. */
export interface AtomicStats {
  /** Optimistic attempts (read, then write against the version read). */
  readonly optimisticTries: number;
  /** Attempts made while holding the promoted lock; 0 without promotion, or when it was not needed. */
  readonly promotedLockTries: number;
  readonly optimisticTimeMs: number;
  /** Time spent on the promoted lock, its acquire included. */
  readonly promotedTimeMs: number;
}

/**
 * The outcome of an operation. Always check `succeeded`: only `get()` and `forceSet()` always
 * succeed; the others give up when their retry policy (and the promoted lock, if any) does.
 */
export interface AtomicValue<T> {
  /** Whether the value was updated (for `get()`: whether it was read, always true). */
  readonly succeeded: boolean;
  /** The value before the operation: the last one read (null, or 0 for numbers, when the node did not exist). */
  readonly preValue: T;
  /** The value written; as in Curator, null (0 for numbers) when the operation did not succeed. For `get()`, the value read. */
  readonly postValue: T;
  readonly stats: AtomicStats;
}

/** Stats being gathered. */
export class MutableStats implements AtomicStats {
  optimisticTries = 0;
  promotedLockTries = 0;
  optimisticTimeMs = 0;
  promotedTimeMs = 0;

  freeze(): AtomicStats {
    return Object.freeze({ ...this });
  }
}
