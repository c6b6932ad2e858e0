import { AsyncLocalStorage } from 'node:async_hooks';
import debug from 'debug';
import {
  Deadline,
  describeValue,
  InvalidArgumentError,
  type LockRecipe,
  metrics,
  startClock,
  validateClient,
  validateFunction,
  validateOptions,
  validateRecipePath,
  waitOutcome,
  type ZkClient,
} from '../../src/recipeKit';
import { checkAcquireOptions, checkTryOptions } from './acquireOptions';
import { LockTimeoutError, NotLockOwnerError } from './errors';
import type { AcquireOptions, InterProcessLock, TryAcquireOptions } from './InterProcessLock';
import { SimpleLease, type Lease } from './Lease';
import { LockInternals, standardDriver, type Acquisition, type LockDriver, type NodeToCreate } from './LockInternals';
import { LockMonitor } from './LockMonitor';

const log = debug('zk-recipes:locks:mutex');

/** One hold of a mutex: a node we won, entered once or more (re-entrancy). */
export interface Holding {
  readonly mutex: InterProcessMutex;
  readonly acquisition: Acquisition;
  readonly monitor: LockMonitor;
  /** The leases of this hold not yet released, oldest first. The node goes with the last. */
  readonly leases: Lease[];
}

/** A lease of a mutex: it knows its hold. */
class MutexLease extends SimpleLease {
  constructor(
    readonly holding: Holding,
    onRelease: (lease: MutexLease) => Promise<void>,
  ) {
    super(holding.acquisition.node, holding.acquisition.fencingToken, () => holding.monitor.signal, () => onRelease(this));
  }
}

/**
 * The holds of the `runExclusive` callbacks the current async context runs inside. Entered with
 * `run` only, so a hold is visible to the callback and what it starts, and to nothing else: a
 * timer, a request handler or a sibling flow started elsewhere never re-enters by accident.
 */
const scopes = new AsyncLocalStorage<ReadonlyMap<InterProcessMutex, Holding>>();

/** The hold behind a lease of any mutex, while it lasts. */
export function holdingOf(lease: Lease | undefined): Holding | undefined {
  const holding = lease instanceof MutexLease ? lease.holding : undefined;
  return holding !== undefined && holding.leases.length > 0 ? holding : undefined;
}

/** The hold of `mutex` by the `runExclusive` callback the current context runs inside, if any. */
export function scopedHolding(mutex: InterProcessMutex): Holding | undefined {
  const holding = scopes.getStore()?.get(mutex);
  return holding !== undefined && holding.leases.length > 0 ? holding : undefined;
}

/** Options of an InterProcessMutex. */
export interface InterProcessMutexOptions {
  /**
   * The lock algorithm's strategy (Curator's LockInternalsDriver); default the mutex's.
   *
   * @internal The read-write lock's seam: not in the published declarations.
   */
  driver?: LockDriver;
  /** Our nodes' data; default the client's `defaultData` (the local IP address, as Curator writes). */
  data?: Buffer | string;
  /** What the lock-wait and lock-hold metrics call this lock; false for a lock inside another recipe, which reports for itself. Default 'mutex'. */
  recipe?: LockRecipe | false;
}

/** What an acquire will do: enter a hold, or contend with this node (undefined: the driver's). */
export type AcquirePlan = { reenter: Holding } | { reenter?: undefined; node?: NodeToCreate };

/**
 * A re-entrant, fair mutex across processes, wire-compatible with Curator's InterProcessMutex:
 * nodes `<path>/_c_<uuid>-lock-NNNNNNNNNN`, so Java services using Curator and Node services using
 * zk-recipes exclude each other on the same path.
 *
 * - **Fair.** Contenders get the lock in the order they asked for it (their node's sequence).
 * - **Herd-free.** A waiter watches only the node just ahead of it; a release wakes one waiter.
 * - **Re-entrant where you ask for it.** Inside a `runExclusive` callback (and what it starts),
 *   acquiring the same mutex again re-enters it; elsewhere, pass the lease you hold as `reenter`.
 *   Every other acquire is a new contender and waits its turn, whatever async context it runs in:
 *   two request handlers, two timers or two queue handlers of one process exclude each other as
 *   two processes do. (Curator's re-entrancy follows the thread; Node has no threads to follow.)
 * - **Time limits hold.** `acquire({ timeoutMs })` waits behind holders and for a connection at most
 *   `timeoutMs`, and rejects with LockTimeoutError within `timeoutMs + attemptTimeoutMs` (1 s by
 *   default): the attempt's own round trips on a live connection have that bound of their own, so
 *   any timeout, 0 included, wins a free lock (as Curator's acquire(0, unit) does). `tryAcquire()`
 *   resolves undefined at once when the client is not connected, and within the longer of its
 *   `timeoutMs` and `attemptTimeoutMs` (1 s each by default) otherwise.
 * - **SUSPENDED / LOST.** A lease's `signal` aborts with a LockLostError when the session is LOST,
 *   when the client closes, when the connection is SUSPENDED under the client's 'standard' error
 *   policy, or when our node is deleted or belongs to another session. A waiter whose session is
 *   lost starts again with a new node. A timed-out or aborted acquire deletes its node (guaranteed).
 *
 * @example
 * ```ts
 * const mutex = new InterProcessMutex(client, '/locks/orders');
 * await using lease = await mutex.acquire({ timeoutMs: 5_000 });
 * await writeOrder({ fencingToken: lease.fencingToken, signal: lease.signal });
 * ```
 */
export class InterProcessMutex implements InterProcessLock {
  readonly client: ZkClient;
  readonly path: string;
  /** @internal The lock algorithm, for the read-write lock's mutexes. */
  protected readonly internals: LockInternals;
  private readonly data: Buffer | string | undefined;
  private readonly recipe: LockRecipe | false;
  private readonly held = new Set<Holding>();
  private revocationListener: ((mutex: InterProcessMutex) => void) | undefined;

  constructor(client: ZkClient, path: string, options: InterProcessMutexOptions = {}) {
    this.client = validateClient(client, 'InterProcessMutex');
    this.path = validateRecipePath(this.client, path, 'lock');
    const o = validateOptions(options, 'options');
    if (o.data !== undefined && typeof o.data !== 'string' && !Buffer.isBuffer(o.data)) {
      throw new InvalidArgumentError(`data must be a Buffer or a string, got ${describeValue(o.data)}`);
    }
    this.data = o.data;
    this.recipe = o.recipe ?? 'mutex';
    this.internals = new LockInternals(this.client, this.path, o.driver ?? standardDriver('lock-'));
  }

  /**
   * Acquires the lock, waiting as long as `timeoutMs` allows (the attempt's own round trips on a
   * live connection have `attemptTimeoutMs` more). Resolves to a Lease; rejects with
   * LockTimeoutError when the time runs out, or with `signal.reason` on abort.
   */
  async acquire(options?: AcquireOptions): Promise<Lease> {
    const o = checkAcquireOptions(options);
    const plan = this.plan(o.reenter);
    if (plan.reenter) return this.enter(plan.reenter);
    const deadline = Deadline.after(o.timeoutMs);
    const waitStart = this.recipe ? startClock(metrics.lockWait) : 0;
    let failure: unknown;
    try {
      for (;;) {
        const acquisition = await this.internals.attempt({ deadline, attemptTimeoutMs: o.attemptTimeoutMs, wait: true, signal: o.signal, data: this.data, node: plan.node });
        if (!acquisition) throw new LockTimeoutError(`could not acquire ${this.path} within ${o.timeoutMs} ms`, { path: this.path });
        const lease = this.holdIfTrusted(acquisition);
        if (lease) return lease;
      }
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      if (waitStart > 0 && this.recipe && metrics.lockWait.hasSubscribers) {
        const outcome = waitOutcome(failure, o.signal);
        metrics.lockWait.publish({ recipe: this.recipe, path: this.path, waitMs: performance.now() - waitStart, outcome, code: outcome === 'error' ? (failure as { code?: string }).code : undefined });
      }
    }
  }

  /**
   * Acquires the lock only if that needs no waiting for another holder: resolves undefined
   * otherwise, at once when the client is not connected, and when the round trips take longer
   * than both `timeoutMs` and `attemptTimeoutMs` (default 1 s each).
   */
  async tryAcquire(options?: TryAcquireOptions): Promise<Lease | undefined> {
    const o = checkTryOptions(options);
    const plan = this.plan(o.reenter);
    if (plan.reenter) return this.enter(plan.reenter);
    if (this.client.isStarted && !this.client.isConnected) return undefined;
    const acquisition = await this.internals.attempt({
      deadline: Deadline.after(o.timeoutMs),
      attemptTimeoutMs: o.attemptTimeoutMs,
      wait: false,
      signal: o.signal,
      data: this.data,
      node: plan.node,
    });
    return acquisition && this.holdIfTrusted(acquisition);
  }

  /**
   * Runs `fn` holding the lock, and releases it when `fn` settles. Inside `fn`, and in what it
   * starts, acquiring this mutex again re-enters the hold. `fn` gets the lease's signal: it aborts
   * when the lock can no longer be trusted.
   */
  async runExclusive<T>(fn: (signal: AbortSignal) => Promise<T> | T, options?: AcquireOptions): Promise<T> {
    validateFunction(fn, 'fn');
    const lease = await this.acquire(options);
    const scope = new Map(scopes.getStore() ?? []);
    scope.set(this, (lease as MutexLease).holding);
    try {
      return await scopes.run(scope, () => fn(lease.signal));
    } finally {
      await lease.release();
    }
  }

  /**
   * Releases one hold, as Curator's release(): the enclosing `runExclusive` callback's, or else the
   * one hold this mutex has in this process (its newest lease). NotLockOwnerError when there is
   * none, or when several are held (a read lock's readers): release the lease then.
   */
  async release(): Promise<void> {
    const holding = this.currentHolding();
    if (!holding) {
      throw new NotLockOwnerError(`no hold of ${this.path} to release here: release the lease instead`, { path: this.path });
    }
    await holding.leases[holding.leases.length - 1].release();
  }

  /** The lock nodes in lock order (full paths); the first holds the lock. */
  getParticipantNodes(): Promise<string[]> {
    return this.internals.getParticipantNodes();
  }

  /** Whether this mutex object holds the lock in this process. */
  isAcquiredInThisProcess(): boolean {
    return this.held.size > 0;
  }

  /** Whether the `runExclusive` callback the current async context runs inside holds this mutex. */
  isOwnedByCurrentContext(): boolean {
    return scopedHolding(this) !== undefined;
  }

  /** Our lock node: the enclosing `runExclusive` callback's, or else this process's one hold; undefined when there is none (Curator's getLockPath). */
  getLockPath(): string | undefined {
    return this.currentHolding()?.acquisition.node;
  }

  /**
   * Makes the lock revocable, as Curator's: when another party calls `Revoker.attemptRevoke` on
   * our node, `listener` is called and should release the lock. Revocation is cooperative.
   */
  makeRevocable(listener: (mutex: InterProcessMutex) => void): void {
    this.revocationListener = validateFunction(listener, 'listener');
  }

  /**
   * What an acquire will do. A subclass may contend with another node, or refuse: the read-write
   * lock's downgrade and upgrade. Throws on a lease that is not of this mutex.
   *
   * @internal The read-write lock's seam: not in the published declarations.
   */
  protected plan(reenter: Lease | undefined): AcquirePlan {
    if (reenter !== undefined) {
      const holding = holdingOf(reenter);
      if (holding?.mutex !== this) throw new InvalidArgumentError(`reenter must be a held lease of this lock (${this.path})`, { path: this.path });
      return { reenter: holding };
    }
    const scoped = scopedHolding(this);
    return scoped ? { reenter: scoped } : {};
  }

  private currentHolding(): Holding | undefined {
    const scoped = scopedHolding(this);
    if (scoped) return scoped;
    return this.held.size === 1 ? [...this.held][0] : undefined;
  }

  /**
   * Holds a lock won, unless it can no longer be trusted already (the connection dropped, or the
   * session ended, since the read that proved the win): a lease lost from the start is no lease.
   * Its node is then let go, and the caller tries again.
   */
  private holdIfTrusted(acquisition: Acquisition): Lease | undefined {
    const revoke = this.revocationListener;
    const monitor = new LockMonitor(this.client, acquisition.node, acquisition.session, revoke ? () => revoke(this) : undefined, acquisition.own);
    if (monitor.isLost) {
      log('%s: won %s, but the lock could no longer be trusted; trying again', this.path, acquisition.node);
      void monitor.releaseAndDelete();
      return undefined;
    }
    if (this.recipe) monitor.handedOut(this.recipe, this.path);
    const holding: Holding = { mutex: this, acquisition, monitor, leases: [] };
    this.held.add(holding);
    if (acquisition.waited && this.internals.driver.handOff && acquisition.toldHere !== true) this.markWhileHeld(holding);
    if (log.enabled) log('%s acquired: %s, token %s (session %s)', this.path, acquisition.node, acquisition.fencingToken, acquisition.session);
    return this.enter(holding);
  }

  /**
   * Writes the hand-off mark (see handOffMark.ts) if the hold lasts past the turn of the event
   * loop it was won in: a holder that releases at once writes nothing.
   */
  private markWhileHeld(holding: Holding): void {
    setImmediate(() => {
      if (!this.held.has(holding) || holding.monitor.isLost) return;
      holding.monitor.letOwnWatchGo();
      this.internals.markHeld(holding.acquisition.node);
    });
  }

  private enter(holding: Holding): Lease {
    const lease = new MutexLease(holding, (released) => this.releaseLease(holding, released));
    holding.leases.push(lease);
    return lease;
  }

  /** Not an async function: the lease's release is the delete's promise itself, with no turn of its own. */
  private releaseLease(holding: Holding, lease: Lease): Promise<void> {
    const at = holding.leases.indexOf(lease);
    if (at < 0) return Promise.resolve();
    holding.leases.splice(at, 1);
    if (holding.leases.length > 0) return Promise.resolve();
    this.held.delete(holding);
    try {
      const deleting = holding.monitor.releaseAndDelete();
      if (log.enabled) log('%s released: %s', this.path, holding.acquisition.node);
      return deleting;
    } catch (err) {
      return Promise.reject(err);
    }
  }
}
