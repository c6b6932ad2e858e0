import debug from 'debug';
import { InvalidArgumentError, validateFunction, type ZkClient } from '../../src/recipeKit';
import { checkAcquireOptions, checkTryOptions } from './acquireOptions';
import { NotLockOwnerError } from './errors';
import type { AcquireOptions, InterProcessLock, TryAcquireOptions } from './InterProcessLock';
import { InterProcessSemaphoreV2 } from './InterProcessSemaphoreV2';
import { SimpleLease, type Lease } from './Lease';

const log = debug('zk-recipes:locks:semaphore-mutex');

/**
 * A mutex across processes that is NOT re-entrant, wire-compatible with Curator's
 * InterProcessSemaphoreMutex: an InterProcessSemaphoreV2 with one lease. Its nodes are
 * `<path>/locks/_c_<uuid>-lock-…` (the queue) and `<path>/leases/_c_<uuid>-lease-…` (the holder),
 * so it does not exclude an InterProcessMutex on the same path: use one kind per path.
 *
 * - **Not re-entrant.** A second acquire while this object holds the lock waits like any other
 *   contender (and times out, if nothing else releases the lock).
 * - **Ownership is per object**, as in Curator: `release()` releases the hold this object took,
 *   from whichever async flow calls it; NotLockOwnerError when it holds none.
 * - **Fair**: contenders queue on the semaphore's internal mutex in FIFO order.
 * - **SUSPENDED / LOST**, timeouts and aborts: as InterProcessSemaphoreV2. A lease's `signal`
 *   aborts with a LockLostError when the lock can no longer be trusted; its `fencingToken` (the
 *   czxid of the lease node) rises from holder to holder.
 *
 * @example
 * ```ts
 * const lock = new InterProcessSemaphoreMutex(client, '/locks/report');
 * await lock.runExclusive(async (signal) => buildReport({ signal }), { timeoutMs: 5_000 });
 * ```
 */
export class InterProcessSemaphoreMutex implements InterProcessLock {
  readonly semaphore: InterProcessSemaphoreV2;
  private current: Lease | undefined;

  constructor(client: ZkClient, path: string) {
    this.semaphore = new InterProcessSemaphoreV2(client, path, { maxLeases: 1 });
  }

  get path(): string {
    return this.semaphore.path;
  }

  /**
   * Acquires the lock, waiting as long as `timeoutMs` allows. Resolves to a Lease; rejects with
   * LockTimeoutError when the time runs out, or with `signal.reason` on abort.
   */
  async acquire(options?: AcquireOptions): Promise<Lease> {
    const { timeoutMs, attemptTimeoutMs, signal, reenter } = checkAcquireOptions(options);
    if (reenter !== undefined) throw new InvalidArgumentError('InterProcessSemaphoreMutex is not re-entrant: reenter does not apply', { path: this.path });
    const [lease] = await this.semaphore.acquire({ timeoutMs, attemptTimeoutMs, signal, qty: 1 });
    return this.hold(lease);
  }

  /** Acquires the lock only if that needs no waiting: resolves undefined otherwise. */
  async tryAcquire(options?: TryAcquireOptions): Promise<Lease | undefined> {
    const { timeoutMs, attemptTimeoutMs, signal, reenter } = checkTryOptions(options);
    if (reenter !== undefined) throw new InvalidArgumentError('InterProcessSemaphoreMutex is not re-entrant: reenter does not apply', { path: this.path });
    const leases = await this.semaphore.tryAcquire({ qty: 1, timeoutMs, attemptTimeoutMs, signal });
    return leases ? this.hold(leases[0]) : undefined;
  }

  /** Runs `fn` holding the lock, and releases it when `fn` settles. `fn` gets the lease's signal. */
  async runExclusive<T>(fn: (signal: AbortSignal) => Promise<T> | T, options?: AcquireOptions): Promise<T> {
    validateFunction(fn, 'fn');
    const lease = await this.acquire(options);
    try {
      return await fn(lease.signal);
    } finally {
      await lease.release();
    }
  }

  /** Releases the hold this object has. Throws NotLockOwnerError if it has none. */
  async release(): Promise<void> {
    const lease = this.current;
    if (!lease) throw new NotLockOwnerError(`this InterProcessSemaphoreMutex does not hold ${this.path}`, { path: this.path });
    await lease.release();
  }

  /** Whether this object holds the lock. */
  isAcquiredInThisProcess(): boolean {
    return this.current !== undefined;
  }

  /** Wraps a semaphore lease so that releasing it, either way, ends this object's hold. */
  private hold(lease: Lease): Lease {
    const held: Lease = new SimpleLease(
      lease.node,
      lease.fencingToken,
      () => lease.signal,
      () => {
        if (this.current === held) this.current = undefined;
        return lease.release();
      },
    );
    // Only one holder at a time, unless a lost session let another in: the newest hold is the one
    // release() ends, as with Curator's single lease field.
    if (this.current) log('%s: a new hold (%s) replaces %s', this.path, lease.node, this.current.node);
    this.current = held;
    return held;
  }
}
