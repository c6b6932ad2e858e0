import debug from 'debug';
import {
  Deadline,
  deferred,
  deleteOwnNode,
  describeValue,
  InvalidArgumentError,
  isSessionEndedError,
  isZkError,
  joinPath,
  metrics,
  nodeName,
  raceAbort,
  type Session,
  SessionLostError,
  sleep,
  startClock,
  type Stat,
  subscribe,
  validateClient,
  validateOptions,
  validatePositiveInt,
  validateRecipePath,
  waitOutcome,
  type ZkClient,
} from '../../src/recipeKit';
import { SharedCount } from '../shared/SharedCount';
import { checkAcquireOptions, checkTryOptions } from './acquireOptions';
import { AttemptScope } from './AttemptScope';
import { LockTimeoutError } from './errors';
import type { AcquireOptions } from './InterProcessLock';
import { InterProcessMutex, holdingOf } from './InterProcessMutex';
import { SimpleLease, type Lease } from './Lease';
import { LockMonitor } from './LockMonitor';
import { sortLockNodes } from './sequence';

const log = debug('zk-recipes:locks:semaphore');

/** Curator's names: the internal mutex lives under `<path>/locks`, the leases under `<path>/leases`. */
export const SEMAPHORE_LOCKS_PARENT = 'locks';
export const SEMAPHORE_LEASES_PARENT = 'leases';
/** The name in a lease node, after the protection prefix: `_c_<uuid>-lease-NNNNNNNNNN`. */
export const SEMAPHORE_LEASE_NAME = 'lease-';

/** Where a semaphore's limit comes from: a fixed number, or a SharedCount that can change it for everyone. */
export type SemaphoreLimit = { maxLeases: number; count?: undefined } | { count: SharedCount; maxLeases?: undefined };

/** Options of an InterProcessSemaphoreV2: the limit, and optionally the data of our lease nodes. */
export type SemaphoreOptions = SemaphoreLimit & {
  /** Data of our lease nodes (Curator's setNodeData); the client's default data (the local IP) when omitted. */
  data?: Buffer | string;
};

export interface SemaphoreAcquireOptions extends AcquireOptions {
  /** How many leases to acquire, all or none. Default 1. */
  qty?: number;
}

type Attempt = Lease[] | 'timeout' | 'vanished';
type Slot = 'held' | 'timeout' | 'vanished';

/**
 * A counting semaphore across processes, wire-compatible with Curator's InterProcessSemaphoreV2:
 * at most `maxLeases` leases are held at a time among all processes (Java services using Curator
 * included) that use the same path and the same limit.
 *
 * Layout: `<path>/locks/` holds an InterProcessMutex (`_c_<uuid>-lock-NNNNNNNNNN`) that acquirers
 * queue on; `<path>/leases/` holds one protected EPHEMERAL_SEQUENTIAL node per lease or would-be
 * lease, `_c_<uuid>-lease-NNNNNNNNNN`. An acquirer takes the mutex, creates its lease node and lists
 * `leases/`: with at most `maxLeases` children it holds; otherwise it waits for a change there
 * (a lease returned, or a higher limit) while still holding the mutex, so later acquirers queue
 * behind it in FIFO order. It releases the mutex once it holds. Every child of `leases/` takes a
 * slot, as in Curator.
 *
 * - **Guarantee.** Leases held never exceed `maxLeases`: a lease is held only after a listing that
 *   shows at most `maxLeases` nodes, its own included, and a node created later is listed with all
 *   those still alive.
 * - **qty > 1.** All `qty` leases are taken under one hold of the internal mutex, all or none.
 *   (Curator releases and re-takes the mutex between the leases of one call, so two callers can each
 *   end up holding part of what they need and wait for each other until they time out; here only
 *   the mutex holder can hold part, and it waits for whole holders, so with qty <= maxLeases the
 *   wait ends. A Curator peer on the same path still takes its leases one by one.)
 * - **Failure.** On timeout, abort or error every lease node the call created is deleted
 *   (guaranteed: retried in the background while the connection is down) and the mutex released.
 * - **SUSPENDED / LOST.** A waiting acquire keeps waiting through SUSPENDED (its reads wait for the
 *   connection under the client's connection timeout and retry policy). When the session is LOST
 *   its nodes go with it: the acquire starts again with new nodes, under the client's retry policy
 *   and within its own timeout, as Curator's does. A held lease's `signal` aborts with a
 *   LockLostError when the session is LOST, when the connection is SUSPENDED under the client's
 *   'standard' error policy, or when the lease node is deleted or belongs to another session.
 * - **Fencing token.** A lease's `fencingToken` is the czxid of its lease node: unique, and larger
 *   for leases created later. With maxLeases 1 that is the order of the holders; with more, holders
 *   overlap and the token only tells them apart.
 *
 * @example
 * ```ts
 * const semaphore = new InterProcessSemaphoreV2(client, '/semaphores/exports', { maxLeases: 3 });
 * const [lease] = await semaphore.acquire({ timeoutMs: 10_000 });
 * try {
 *   await runExport({ signal: lease.signal });
 * } finally {
 *   await lease.release();
 * }
 * ```
 */
export class InterProcessSemaphoreV2 {
  readonly path: string;
  /** `<path>/locks`, where acquirers queue. */
  readonly locksPath: string;
  /** `<path>/leases`, one node per lease. */
  readonly leasesPath: string;
  private readonly fixedMaxLeases: number;
  private readonly count: SharedCount | undefined;
  private readonly data: Buffer | string | undefined;

  readonly client: ZkClient;
  /** The internal mutex acquirers queue on; each acquire is a contender of its own. */
  private readonly mutex: InterProcessMutex;

  constructor(client: ZkClient, path: string, options: SemaphoreOptions) {
    this.client = validateClient(client, 'InterProcessSemaphoreV2');
    this.path = validateRecipePath(this.client, path, 'semaphore');
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options must be { maxLeases } or { count }');
    if (options.data !== undefined && typeof options.data !== 'string' && !Buffer.isBuffer(options.data)) {
      throw new InvalidArgumentError(`data must be a Buffer or a string, got ${describeValue(options.data)}`);
    }
    if (options.count !== undefined) {
      if (options.maxLeases !== undefined) throw new InvalidArgumentError('give maxLeases or count, not both');
      if (!(options.count instanceof SharedCount)) {
        throw new InvalidArgumentError('count must be a SharedCount');
      }
      this.count = options.count;
      this.fixedMaxLeases = 0;
    } else {
      this.fixedMaxLeases = validatePositiveInt(options.maxLeases, 'maxLeases');
    }
    this.data = options.data;
    this.locksPath = joinPath(this.path, SEMAPHORE_LOCKS_PARENT);
    this.leasesPath = joinPath(this.path, SEMAPHORE_LEASES_PARENT);
    this.mutex = new InterProcessMutex(this.client, this.locksPath, { recipe: false });
  }

  /** The limit now: the fixed one, or the SharedCount's current count. */
  get maxLeases(): number {
    return this.count ? this.count.getCount() : this.fixedMaxLeases;
  }

  /**
   * Acquires `qty` leases (default 1), waiting as long as `timeoutMs` allows (behind other
   * acquirers and holders, and for a connection); the attempt's own round trips on a live
   * connection have `attemptTimeoutMs` (default 1 s) more, so any timeout, 0 included, takes free
   * leases. Resolves to the leases; rejects with LockTimeoutError when
   * the time runs out, or with `signal.reason` on abort, with none of the call's nodes left behind.
   */
  async acquire(options: SemaphoreAcquireOptions = {}): Promise<Lease[]> {
    const o = validateOptions(options, 'options');
    const qty = validatePositiveInt(o.qty ?? 1, 'qty');
    const { timeoutMs, attemptTimeoutMs, signal, reenter } = checkAcquireOptions(o);
    if (reenter !== undefined) throw new InvalidArgumentError('a semaphore is not re-entrant: reenter does not apply', { path: this.path });
    const waitStart = startClock(metrics.lockWait);
    let failure: unknown;
    try {
      const leases = await this.acquireLoop(qty, Deadline.after(timeoutMs), attemptTimeoutMs, true, signal);
      if (leases) return leases;
      throw new LockTimeoutError(`could not acquire ${qty} lease(s) of ${this.path} within ${timeoutMs} ms`, { path: this.path });
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      if (waitStart > 0 && metrics.lockWait.hasSubscribers) {
        const outcome = waitOutcome(failure, signal);
        metrics.lockWait.publish({ recipe: 'semaphore', path: this.path, waitMs: performance.now() - waitStart, outcome, code: outcome === 'error' ? (failure as { code?: string }).code : undefined });
      }
    }
  }

  /**
   * Acquires `qty` leases (default 1) only if that needs no waiting for other holders: resolves
   * undefined otherwise, at once when the client is not connected, and when the round trips take
   * longer than both `timeoutMs` and `attemptTimeoutMs` (default 1 s each).
   */
  async tryAcquire(options: { qty?: number; timeoutMs?: number; attemptTimeoutMs?: number; signal?: AbortSignal } = {}): Promise<Lease[] | undefined> {
    const o = validateOptions(options, 'options');
    const qty = validatePositiveInt(o.qty ?? 1, 'qty');
    const { timeoutMs, attemptTimeoutMs, signal } = checkTryOptions(o);
    if (this.client.isStarted && !this.client.isConnected) return undefined;
    return this.acquireLoop(qty, Deadline.after(timeoutMs), attemptTimeoutMs, false, signal);
  }

  /** Returns a lease (Curator's returnLease): the same as `lease.release()`. */
  returnLease(lease: Lease): Promise<void> {
    return lease.release();
  }

  /** Returns every lease given. */
  async returnAll(leases: Iterable<Lease>): Promise<void> {
    await Promise.all([...leases].map((lease) => lease.release()));
  }

  /**
   * The nodes under `leases/` as full paths: lease nodes in creation order, then any others (they
   * take a slot too): the holders, and the one acquirer waiting for a slot. (Curator returns the
   * bare names, unsorted; full sorted paths match InterProcessMutex.getParticipantNodes here.)
   */
  async getParticipantNodes(): Promise<string[]> {
    let children: string[];
    try {
      children = await this.client.getChildren(this.leasesPath);
    } catch (err) {
      if (isZkError(err, 'NONODE')) return [];
      throw err;
    }
    const leases = sortLockNodes(children, [SEMAPHORE_LEASE_NAME]);
    const named = new Set(leases);
    const others = children.filter((c) => !named.has(c)).sort();
    return [...leases, ...others].map((c) => joinPath(this.leasesPath, c));
  }

  private async acquireLoop(qty: number, deadline: Deadline, attemptTimeoutMs: number, wait: boolean, signal: AbortSignal | undefined): Promise<Lease[] | undefined> {
    const scope = new AttemptScope(this.client, deadline, attemptTimeoutMs, signal);
    const startedAt = Date.now();
    try {
      for (let retries = 0; ; retries++) {
        const outcome = await this.attempt(qty, wait, scope);
        if (outcome === 'timeout') return undefined;
        if (outcome !== 'vanished') return outcome;
        // Our nodes went with our session. Curator asks the retry policy, then starts over.
        const lost = new SessionLostError('expired', `a lease node under ${this.leasesPath} vanished with its session`, { path: this.leasesPath });
        const delayMs = this.client.options.retryPolicy.allowRetry(retries, Date.now() - startedAt, lost);
        if (delayMs === false) throw lost;
        log('%s: lease node vanished (session %s); trying again in %d ms', this.path, this.client.session ?? '-', delayMs);
        await scope.waiting(() => sleep(delayMs, scope.signal));
      }
    } catch (err) {
      if (scope.isTimeout(err)) return undefined;
      throw err;
    } finally {
      scope.dispose();
    }
  }

  /** One go: take the internal mutex, then `qty` slots; on every way out but success, undo it all. */
  private async attempt(qty: number, wait: boolean, scope: AttemptScope): Promise<Attempt> {
    const limits = { timeoutMs: scope.deadline.isFinite ? scope.deadline.remainingMs : undefined, attemptTimeoutMs: scope.attemptRemainingMs, signal: scope.signal };
    let lock: Lease | undefined;
    try {
      // The mutex keeps its own limits, the same as ours: our deadline leaves its claim alone.
      lock = await scope.within(() => (wait ? this.mutex.acquire(limits) : this.mutex.tryAcquire(limits)));
    } catch (err) {
      if (err instanceof LockTimeoutError) return 'timeout';
      throw err;
    }
    if (lock === undefined) return 'timeout';
    const nodes: string[] = [];
    // All our nodes must live in the session of our internal mutex node, or the mutex no longer
    // queues the others behind us: reads are pinned to it (see LockInternals), and a lease node
    // whose create was retried into a later session sends us round again.
    const session: { value?: Session } = { value: holdingOf(lock)?.acquisition.session };
    let leases: Lease[] | undefined;
    let lockReleased = false;
    try {
      for (let i = 0; i < qty; i++) {
        const slot = await this.takeSlot(nodes, session, wait, scope);
        if (slot !== 'held') return slot;
      }
      // One round trip for all: the czxid is the fencing token, the owner the session to watch.
      const stats = await Promise.all(nodes.map((node) => this.client.exists(node, { session: session.value, signal: scope.signal })));
      if (stats.some((stat) => stat === null || stat.ephemeralOwner !== session.value?.id)) return 'vanished';
      const made = nodes.map((node, i) => this.makeLease(node, stats[i] as Stat, session.value as Session));
      // The internal mutex goes first, in the background (the leases are ours now, and its release
      // must not hold them back): sending its delete may find the connection dropped, and a lease
      // lost so must not be handed out.
      lockReleased = true;
      void lock.release();
      // A lease lost from the start (the connection dropped, or the session ended, since the read
      // that proved the slot) is no lease: give them all back and try again.
      if (made.some(({ monitor }) => monitor.isLost)) {
        log('%s: leases %s could no longer be trusted when won; trying again', this.path, nodes.join(', '));
        await Promise.all(made.map((lease) => lease.lease.release()));
        return 'vanished';
      }
      leases = made.map((lease) => lease.lease);
      for (const { monitor } of made) monitor.handedOut('semaphore', this.path);
      log('%s: acquired %d lease(s): %s (session %s)', this.path, qty, nodes.join(', '), session.value);
      return leases;
    } catch (err) {
      if (isSessionEndedError(err)) return 'vanished';
      throw err;
    } finally {
      if (!leases) await Promise.all(nodes.map((node) => this.deleteNode(node, scope.signal)));
      if (!lockReleased) void lock.release();
    }
  }

  /** Creates a lease node (recorded in `nodes` at once) and waits, in the session of our nodes, until it holds a slot. */
  private async takeSlot(nodes: string[], session: { value?: Session }, wait: boolean, scope: AttemptScope): Promise<Slot> {
    const created = await this.client.createAndListParent(joinPath(this.leasesPath, SEMAPHORE_LEASE_NAME), {
      mode: 'EPHEMERAL_SEQUENTIAL',
      protected: true,
      createParents: 'container',
      data: this.data,
      signal: scope.signal,
    });
    nodes.push(created.path);
    session.value ??= created.session;
    if (created.session !== session.value) return 'vanished';
    const ours = nodeName(created.path);
    // The listing came in the same round trip as the create: a free slot costs no further read.
    let children = created.children;
    for (;;) {
      if (!children.includes(ours)) return 'vanished';
      if (children.length <= this.maxLeases) return 'held';
      if (!wait) return 'timeout';
      const woke = deferred<void>();
      const stopCount = this.count && subscribe(this.count, 'changed', () => woke.resolve());
      try {
        try {
          children = await this.client.getChildren(this.leasesPath, { watcher: () => woke.resolve(), session: session.value, signal: scope.signal });
        } catch (err) {
          // The parent can only go once our node has gone with it.
          if (isZkError(err, 'NONODE')) return 'vanished';
          throw err;
        }
        if (!children.includes(ours) || children.length <= this.maxLeases) continue;
        log('%s: %s waits for a slot (%d nodes, max %d)', this.path, ours, children.length, this.maxLeases);
        await scope.waiting(() => raceAbort(woke.promise, scope.signal));
        // Woken: go round and list again, with a new watch.
      } finally {
        stopCount?.();
      }
    }
  }

  private makeLease(node: string, stat: Stat, session: Session): { lease: Lease; monitor: LockMonitor } {
    const monitor = new LockMonitor(this.client, node, session);
    const lease = new SimpleLease(
      node,
      stat.czxid,
      () => monitor.signal,
      async () => {
        const deleting = monitor.releaseAndDelete();
        log('%s: returned %s', this.path, node);
        await deleting;
      },
    );
    return { lease, monitor };
  }

  /** Deletes one of our nodes, guaranteed (see deleteOwnNode): waiting for the server at most until `within` aborts. */
  private deleteNode(node: string, within: AbortSignal | undefined): Promise<void> {
    return deleteOwnNode(this.client, node, within);
  }
}
