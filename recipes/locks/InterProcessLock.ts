import type { Lease } from './Lease';

export interface AcquireOptions {
  /** Give up after this long with LockTimeoutError; undefined waits as long as it takes. */
  timeoutMs?: number;
  /** Abort the wait: acquire rejects with `signal.reason`, and the attempt's node is deleted. */
  signal?: AbortSignal;
}

/**
 * What every mutex-shaped lock offers, like Curator's InterProcessLock: InterProcessMutex,
 * InterProcessSemaphoreMutex, the read and write locks of InterProcessReadWriteLock, and
 * InterProcessMultiLock. The contract test suite runs against each.
 */
export interface InterProcessLock {
  /** Resolves to a Lease; rejects with LockTimeoutError when `timeoutMs` runs out, or with `signal.reason`. */
  acquire(options?: AcquireOptions): Promise<Lease>;
  /** Resolves to a Lease if the lock can be had without waiting, else undefined. */
  tryAcquire(): Promise<Lease | undefined>;
  /** Runs `fn` holding the lock and releases it when `fn` settles. `fn` gets the lease's signal. */
  runExclusive<T>(fn: (signal: AbortSignal) => Promise<T> | T, options?: AcquireOptions): Promise<T>;
  /** Releases the current holder's hold (Curator's release()); NotLockOwnerError if there is none. */
  release(): Promise<void>;
  /** Whether a holder in this process holds the lock. */
  isAcquiredInThisProcess(): boolean;
}
