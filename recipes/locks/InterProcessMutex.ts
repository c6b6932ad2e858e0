import { AsyncLocalStorage } from 'node:async_hooks';
import debug from 'debug';
import type { ZkClient } from '../../src/client/ZkClient';
import { InvalidArgumentError } from '../../src/errors';
import { validatePath } from '../../src/paths';
import { validateFunction, validateSignal, validateTimeout } from '../../src/validate';
import { LockTimeoutError, NotLockOwnerError } from './errors';
import type { AcquireOptions, InterProcessLock } from './InterProcessLock';
import { SimpleLease, type Lease } from './Lease';
import { LockInternals, standardDriver, type Acquisition, type LockDriver } from './LockInternals';
import { LockMonitor } from './LockMonitor';

const log = debug('zk-recipes:locks:mutex');

/** One context's hold on one mutex. */
interface Holding {
  state: 'pending' | 'held' | 'released';
  count: number;
  acquisition?: Acquisition;
  monitor?: LockMonitor;
}

/** Which mutexes an async execution context holds. */
type LockContext = Map<InterProcessMutex, Holding>;

/** Shared by every mutex: re-entrancy follows the async execution context, as Curator's follows the thread. */
const contexts = new AsyncLocalStorage<LockContext>();

/**
 * A re-entrant, fair mutex across processes, wire-compatible with Curator's InterProcessMutex:
 * nodes `<path>/_c_<uuid>-lock-NNNNNNNNNN`, so Java services using Curator and Node services using
 * zk-recipes exclude each other on the same path.
 *
 * - **Fair.** Contenders get the lock in the order they asked for it (their node's sequence).
 * - **Herd-free.** A waiter watches only the node just ahead of it; a release wakes one waiter.
 * - **Re-entrant** within one async execution context (AsyncLocalStorage), as Curator's is within
 *   one thread: nested acquires count, and the lock goes at the last release. Separate async flows
 *   contend like Curator's threads. `runExclusive` runs its callback in a context of its own.
 *   Flows started in the same synchronous run are told apart too: a context whose acquire of this
 *   mutex is still pending cannot be re-entered, so a second acquire there contends.
 * - **SUSPENDED / LOST.** A lease's `signal` aborts with a LockLostError when the session is LOST,
 *   when the connection is SUSPENDED under the client's 'standard' error policy, or when our node
 *   is deleted or belongs to another session. A waiter whose session is lost starts again with a
 *   new node. A timed-out or aborted acquire deletes its node (guaranteed).
 *
 * @example
 * ```ts
 * const mutex = new InterProcessMutex(client, '/locks/orders');
 * await using lease = await mutex.acquire({ timeoutMs: 5_000 });
 * await writeOrder({ fencingToken: lease.fencingToken, signal: lease.signal });
 * ```
 */
export class InterProcessMutex implements InterProcessLock {
  readonly path: string;
  private readonly internals: LockInternals;
  private revocationListener: ((mutex: InterProcessMutex) => void) | undefined;
  private heldHere = 0;

  constructor(
    readonly client: ZkClient,
    path: string,
    options: { driver?: LockDriver; data?: Buffer | string } = {},
  ) {
    this.path = validatePath(path);
    if (this.path === '/') throw new InvalidArgumentError('a lock path cannot be the root', { path });
    this.internals = new LockInternals(client, this.path, options.driver ?? standardDriver('lock-'));
    this.data = options.data;
  }

  private readonly data: Buffer | string | undefined;

  /**
   * Acquires the lock, waiting as long as `timeoutMs` allows. Resolves to a Lease; rejects with
   * LockTimeoutError when the time runs out, or with `signal.reason` on abort.
   */
  acquire(options: AcquireOptions = {}): Promise<Lease> {
    const timeoutMs = validateTimeout(options.timeoutMs, 'timeoutMs');
    const signal = validateSignal(options.signal);
    return this.acquireIn(timeoutMs, signal).then((lease) => {
      if (lease) return lease;
      throw new LockTimeoutError(`could not acquire ${this.path} within ${timeoutMs} ms`, { path: this.path });
    });
  }

  /** Acquires the lock only if that needs no waiting: resolves undefined otherwise. */
  tryAcquire(): Promise<Lease | undefined> {
    return this.acquireIn(0, undefined);
  }

  /**
   * Runs `fn` holding the lock, in an execution context of its own, and releases the lock when
   * `fn` settles. `fn` gets the lease's signal: it aborts when the lock can no longer be trusted.
   */
  runExclusive<T>(fn: (signal: AbortSignal) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    validateFunction(fn, 'fn');
    const outer = contexts.getStore();
    return contexts.run(new Map(outer ?? []), async () => {
      const lease = await this.acquire(options);
      try {
        return await fn(lease.signal);
      } finally {
        await lease.release();
      }
    });
  }

  /** Releases one level of the current context's hold. Throws NotLockOwnerError if it holds none. */
  async release(): Promise<void> {
    const holding = contexts.getStore()?.get(this);
    if (!holding || holding.state !== 'held') {
      throw new NotLockOwnerError(`this execution context does not hold ${this.path}`, { path: this.path });
    }
    await this.releaseOne(contexts.getStore() as LockContext, holding);
  }

  /** The lock nodes in lock order (full paths); the first holds the lock. */
  getParticipantNodes(): Promise<string[]> {
    return this.internals.getParticipantNodes();
  }

  /** Whether some context of this process holds this mutex. */
  isAcquiredInThisProcess(): boolean {
    return this.heldHere > 0;
  }

  /** Whether the current execution context holds this mutex. */
  isOwnedByCurrentContext(): boolean {
    return contexts.getStore()?.get(this)?.state === 'held';
  }

  /** The node through which the current execution context holds this mutex; undefined when it holds none (Curator's getLockPath). */
  getLockPath(): string | undefined {
    const holding = contexts.getStore()?.get(this);
    return holding?.state === 'held' ? holding.acquisition?.node : undefined;
  }

  /**
   * Makes the lock revocable, as Curator's: when another party calls `Revoker.attemptRevoke` on
   * our node, `listener` is called and should release the lock. Revocation is cooperative.
   */
  makeRevocable(listener: (mutex: InterProcessMutex) => void): void {
    this.revocationListener = validateFunction(listener, 'listener');
  }

  private acquireIn(timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<Lease | undefined> {
    let context = contexts.getStore();
    const existing = context?.get(this);
    if (existing?.state === 'held') {
      existing.count++;
      return Promise.resolve(this.leaseFor(context as LockContext, existing));
    }
    if (!context || existing?.state === 'pending') {
      // No context yet, or one whose acquire of this mutex is still pending (a sibling flow
      // started in the same synchronous run): this acquire gets a context of its own.
      context = new Map(context ?? []);
      context.delete(this);
      contexts.enterWith(context);
    }
    const holding: Holding = { state: 'pending', count: 0 };
    context.set(this, holding);
    return this.win(context, holding, timeoutMs, signal);
  }

  private async win(context: LockContext, holding: Holding, timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<Lease | undefined> {
    let acquisition: Acquisition | undefined;
    try {
      acquisition = await this.internals.attempt({ timeoutMs, signal, data: this.data });
    } finally {
      if (!acquisition && context.get(this) === holding) context.delete(this);
    }
    if (!acquisition) return undefined;
    holding.state = 'held';
    holding.count = 1;
    holding.acquisition = acquisition;
    const revoke = this.revocationListener;
    holding.monitor = new LockMonitor(this.client, acquisition.node, acquisition.session, revoke ? () => revoke(this) : undefined);
    this.heldHere++;
    log('%s acquired: %s, token %s', this.path, acquisition.node, acquisition.fencingToken);
    return this.leaseFor(context, holding);
  }

  private leaseFor(context: LockContext, holding: Holding): Lease {
    const acquisition = holding.acquisition as Acquisition;
    const monitor = holding.monitor as LockMonitor;
    return new SimpleLease(
      acquisition.node,
      acquisition.fencingToken,
      () => monitor.signal,
      () => this.releaseOne(context, holding),
    );
  }

  private async releaseOne(context: LockContext, holding: Holding): Promise<void> {
    if (holding.state !== 'held' || holding.count <= 0) return;
    holding.count--;
    if (holding.count > 0) return;
    holding.state = 'released';
    if (context.get(this) === holding) context.delete(this);
    this.heldHere--;
    holding.monitor?.stop();
    const node = (holding.acquisition as Acquisition).node;
    log('%s released: %s', this.path, node);
    await this.internals.deleteOurNode(node);
  }
}
