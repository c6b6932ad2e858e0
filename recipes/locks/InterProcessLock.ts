import type { Lease } from './Lease';

export interface AcquireOptions {
  /**
   * Give up waiting after this long with LockTimeoutError; undefined waits as long as it takes. It
   * bounds waiting behind other holders and waiting for a connection. The attempt's own round trips
   * on a live connection are bounded by `attemptTimeoutMs` instead, so any timeout, 0 included,
   * wins a free lock, and the acquire ends within `timeoutMs + attemptTimeoutMs` whatever the
   * network does. Any size is honoured: Number.MAX_SAFE_INTEGER means, in effect, no limit.
   */
  timeoutMs?: number;
  /**
   * How long the attempt's own round trips may run past `timeoutMs` on a live connection (default
   * 1 s): a run of them (at the start, or after a wait) ends within this from its start. Offline,
   * `timeoutMs` alone holds.
   */
  attemptTimeoutMs?: number;
  /** Abort the wait: acquire rejects with `signal.reason`, and the attempt's node is deleted. */
  signal?: AbortSignal;
  /**
   * Re-enter through a lease of this lock that you hold: the acquire resolves at once with a new
   * lease on the same node, and the lock goes when every lease of the hold is released. (Inside a
   * `runExclusive` callback, the lock is re-entered without it.) Locks that are not re-entrant
   * refuse it.
   */
  reenter?: Lease;
}

export interface TryAcquireOptions {
  /**
   * Bounds the round trips of the try (default 1 s), with `attemptTimeoutMs`: they may take the
   * longer of the two, and when they take longer, the try resolves undefined. So any timeout, 0
   * included, wins a free lock on a live connection.
   */
  timeoutMs?: number;
  /** As for `acquire` (default 1 s). */
  attemptTimeoutMs?: number;
  signal?: AbortSignal;
  /** As for `acquire`. */
  reenter?: Lease;
}

/**
 * What every mutex-shaped lock offers, like Curator's InterProcessLock: InterProcessMutex,
 * InterProcessSemaphoreMutex, the read and write locks of InterProcessReadWriteLock, and
 * InterProcessMultiLock. The contract test suite runs against each.
 */
export interface InterProcessLock {
  /** Resolves to a Lease; rejects with LockTimeoutError when `timeoutMs` runs out, or with `signal.reason`. */
  acquire(options?: AcquireOptions): Promise<Lease>;
  /**
   * Resolves to a Lease if the lock can be had without waiting for another holder, else undefined:
   * at once when the client is not connected, and when the round trips take longer than `timeoutMs`.
   */
  tryAcquire(options?: TryAcquireOptions): Promise<Lease | undefined>;
  /**
   * Runs `fn` holding the lock and releases it when `fn` settles. `fn` gets the lease's signal.
   * Inside `fn` (and what it starts), acquiring this lock again re-enters it.
   */
  runExclusive<T>(fn: (signal: AbortSignal) => Promise<T> | T, options?: AcquireOptions): Promise<T>;
  /**
   * Releases one hold (Curator's release()): that of the enclosing `runExclusive` callback, or
   * else the one hold this lock has in this process. NotLockOwnerError when there is none, or
   * several to choose from: then release the lease.
   */
  release(): Promise<void>;
  /** Whether a holder in this process holds the lock. */
  isAcquiredInThisProcess(): boolean;
}

/** How long a try waits for its round trips by default. */
export const DEFAULT_TRY_TIMEOUT_MS = 1_000;

/** How long an attempt's own round trips may run past the caller's timeout on a live connection, by default. */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 1_000;

/** How long `release()` waits for the server to confirm the delete before leaving it to the background. */
export const RELEASE_WAIT_MS = 1_000;
