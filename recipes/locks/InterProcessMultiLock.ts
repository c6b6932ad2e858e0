import debug from 'debug';
import { Deadline, InvalidArgumentError, linkedSignal, validateFunction, type ZkClient } from '../../src/recipeKit';
import { checkAcquireOptions, checkTryOptions } from './acquireOptions';
import type { AcquireOptions, InterProcessLock, TryAcquireOptions } from './InterProcessLock';
import { InterProcessMutex } from './InterProcessMutex';
import type { Lease } from './Lease';

const log = debug('zk-recipes:locks:multi');

/**
 * The hold of an InterProcessMultiLock: one lease per underlying lock, in lock order. Releasing it
 * releases them all, in reverse order.
 */
export class MultiLease implements Lease {
  private releasing: Promise<void> | undefined;
  private combined: AbortSignal | undefined;

  constructor(
    /** The underlying leases, in the order of the locks. */
    readonly leases: readonly Lease[],
  ) {}

  /** The first lock's node. Each lock's own node is in `leases`. */
  get node(): string {
    return this.leases[0].node;
  }

  /**
   * The largest of the underlying tokens. Tokens are zxids, one sequence for the whole ensemble, and
   * each lock's token rises from holder to holder, so the largest rises too.
   */
  get fencingToken(): bigint {
    return this.leases.reduce((max, lease) => (lease.fencingToken > max ? lease.fencingToken : max), 0n);
  }

  /** Aborts as soon as any underlying lease's signal aborts, with its reason. */
  get signal(): AbortSignal {
    // Built on first use: asking a lease for its signal may start watching its node.
    this.combined ??= linkedSignal(this.leases.map((lease) => lease.signal)).signal;
    return this.combined;
  }

  get released(): boolean {
    return this.releasing !== undefined;
  }

  /** Releases every underlying lease, last lock first. Idempotent. Rejects with the first failure, after trying them all. */
  release(): Promise<void> {
    this.releasing ??= releaseInReverse(this.leases);
    return this.releasing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}

/**
 * Several locks held as one, like Curator's InterProcessMultiLock: `acquire` takes them in the
 * order given and resolves once it holds all of them; if one cannot be had (timeout, abort, error),
 * the ones already held are released, last first, and the failure is passed on. Release goes in
 * reverse order. Built from paths, it uses an InterProcessMutex per path.
 *
 * - **Deadlock-free only with one order.** Every process must name shared locks in the same order.
 * - **Re-entrant** exactly when every underlying lock is (InterProcessMutexes are, per async
 *   context; InterProcessSemaphoreMutexes are not).
 * - `timeoutMs` bounds the whole acquire's waiting, not each lock's; with the attempts' round trips,
 *   the acquire ends within `timeoutMs + attemptTimeoutMs`.
 * - **SUSPENDED / LOST.** The lease's `signal` aborts when any underlying lease's signal does;
 *   timeouts, aborts and session loss while waiting behave as in the underlying locks.
 *
 * @example
 * ```ts
 * const both = new InterProcessMultiLock(client, ['/locks/account-1', '/locks/account-2']);
 * await using lease = await both.acquire({ timeoutMs: 5_000 });
 * await transfer({ signal: lease.signal });
 * ```
 */
export class InterProcessMultiLock implements InterProcessLock {
  readonly locks: readonly InterProcessLock[];

  constructor(locks: readonly InterProcessLock[]);
  constructor(client: ZkClient, paths: readonly string[]);
  constructor(first: readonly InterProcessLock[] | ZkClient, paths?: readonly string[]) {
    if (Array.isArray(first)) {
      this.locks = [...(first as readonly InterProcessLock[])];
      for (const lock of this.locks) {
        if (typeof lock?.acquire !== 'function' || typeof lock.release !== 'function') throw new InvalidArgumentError('each lock must be an InterProcessLock');
      }
    } else {
      if (!Array.isArray(paths)) throw new InvalidArgumentError('paths must be an array of lock paths');
      this.locks = paths.map((path) => new InterProcessMutex(first as ZkClient, path));
    }
    if (this.locks.length === 0) throw new InvalidArgumentError('a multi-lock needs at least one lock');
  }

  /**
   * Acquires every lock in order, within `timeoutMs` in all. Resolves to a MultiLease; on a timeout
   * (LockTimeoutError), an abort (`signal.reason`) or an error, releases what it took, last first,
   * and rejects with that failure.
   */
  async acquire(options?: AcquireOptions): Promise<MultiLease> {
    const { timeoutMs, attemptTimeoutMs, signal, reenter } = checkAcquireOptions(options);
    if (reenter !== undefined) throw new InvalidArgumentError('reenter does not apply to a multi-lock: acquire its locks with their own leases');
    const limits = new Limits(timeoutMs, attemptTimeoutMs);
    return (await this.takeAll((lock) => lock.acquire({ ...limits.next(), signal }))) as MultiLease;
  }

  /** Takes every lock only if none needs waiting: resolves undefined otherwise, holding nothing. */
  async tryAcquire(options?: TryAcquireOptions): Promise<MultiLease | undefined> {
    const { timeoutMs, attemptTimeoutMs, signal, reenter } = checkTryOptions(options);
    if (reenter !== undefined) throw new InvalidArgumentError('reenter does not apply to a multi-lock: acquire its locks with their own leases');
    const limits = new Limits(timeoutMs, attemptTimeoutMs);
    return this.takeAll((lock) => lock.tryAcquire({ ...limits.next(), signal }));
  }

  /**
   * Runs `fn` holding every lock and releases them, last first, when `fn` settles. Each lock's own
   * runExclusive nests inside the previous one's, so each gets the execution context it gives its
   * callback. `fn` gets a signal that aborts when any lease's does.
   */
  async runExclusive<T>(fn: (signal: AbortSignal) => Promise<T> | T, options?: AcquireOptions): Promise<T> {
    validateFunction(fn, 'fn');
    const { timeoutMs, attemptTimeoutMs, signal, reenter } = checkAcquireOptions(options);
    if (reenter !== undefined) throw new InvalidArgumentError('reenter does not apply to a multi-lock: acquire its locks with their own leases');
    const limits = new Limits(timeoutMs, attemptTimeoutMs);
    const nest = async (i: number, signals: AbortSignal[]): Promise<T> => {
      if (i === this.locks.length) return fn(linkedSignal(signals).signal);
      return this.locks[i].runExclusive((s) => nest(i + 1, [...signals, s]), { ...limits.next(), signal });
    };
    return nest(0, []);
  }

  /**
   * Releases one hold of every lock, last first, as Curator's release(): each lock decides whose
   * hold that is (the current async context for InterProcessMutex, the object for
   * InterProcessSemaphoreMutex). Tries them all, then rejects with the first failure, such as
   * NotLockOwnerError when there is no hold. Release a hold either this way or through its lease,
   * not both.
   */
  async release(): Promise<void> {
    let first: unknown;
    let failed = false;
    for (const lock of [...this.locks].reverse()) {
      try {
        await lock.release();
      } catch (err) {
        if (!failed) first = err;
        failed = true;
      }
    }
    if (failed) throw first;
  }

  /**
   * Whether any of the locks is held in this process. As Curator reasons: if one is, no other
   * process can hold the whole set.
   */
  isAcquiredInThisProcess(): boolean {
    return this.locks.some((lock) => lock.isAcquiredInThisProcess());
  }

  /** Takes the locks in order with `take`; on a miss or a failure, gives back what it took. */
  private async takeAll(take: (lock: InterProcessLock) => Promise<Lease | undefined>): Promise<MultiLease | undefined> {
    const held: Lease[] = [];
    let lease: Lease | undefined;
    try {
      for (const lock of this.locks) {
        lease = await take(lock);
        if (lease === undefined) break;
        held.push(lease);
      }
    } catch (err) {
      await this.rollBack(held, err);
      throw err;
    }
    if (lease === undefined) {
      await this.rollBack(held, 'not available');
      return undefined;
    }
    return new MultiLease(held);
  }

  private async rollBack(held: Lease[], why: unknown): Promise<void> {
    if (held.length === 0) return;
    log('giving back %d of %d locks (%s): %s', held.length, this.locks.length, String(why), held.map((l) => l.node).join(', '));
    try {
      await releaseInReverse(held);
    } catch (err) {
      // Keep the original failure; this one only goes to the log.
      log('giving back %s failed: %O', held.map((l) => l.node).join(', '), err);
    }
  }
}

async function releaseInReverse(leases: readonly Lease[]): Promise<void> {
  let first: unknown;
  let failed = false;
  for (const lease of [...leases].reverse()) {
    try {
      await lease.release();
    } catch (err) {
      if (!failed) first = err;
      failed = true;
    }
  }
  if (failed) throw first;
}

/**
 * The limits of one call over several locks, shared out lock by lock: each gets what is left of the
 * waiting time, and an attempt bound that ends by the call's own limit (`timeoutMs +
 * attemptTimeoutMs` from its start), so the call as a whole keeps the bound one lock has.
 */
class Limits {
  private readonly deadline: Deadline;
  private readonly limit: Deadline;

  constructor(
    timeoutMs: number | undefined,
    private readonly attemptTimeoutMs: number,
  ) {
    this.deadline = Deadline.after(timeoutMs);
    this.limit = Deadline.after(timeoutMs === undefined ? undefined : timeoutMs + attemptTimeoutMs);
  }

  next(): { timeoutMs: number | undefined; attemptTimeoutMs: number } {
    return {
      timeoutMs: this.deadline.isFinite ? this.deadline.remainingMs : undefined,
      attemptTimeoutMs: Math.min(this.attemptTimeoutMs, this.limit.remainingMs),
    };
  }
}
