/**
 * What one worker process does, loop by loop: the mutex with a guarded increment, the read-write
 * lock (writers increment, readers check that no writer is inside), a semaphore of 3 leases, a
 * LeaderLatch and a LeaderSelector whose leaders increment, and a lock-safe DistributedQueue with a
 * producer and a consumer. Every hold, operation and outcome becomes a history event.
 *
 * A hold runs from the moment the acquire resolves (or leadership begins) until its release is
 * called, its signal aborts, or the register fences it off; the worker then lets go at once.
 */
import { ZkError, type ZkClient } from '../src';
import {
  DistributedQueue,
  InterProcessMutex,
  InterProcessReadWriteLock,
  InterProcessSemaphoreV2,
  LeaderLatch,
  LeaderSelector,
  LockLostError,
  LockTimeoutError,
  sortLockNodes,
  type Lease,
} from '../recipes';
import { now, type HistoryEvent, type HoldKind } from './history';
import type { Random } from './random';
import type { RegisterClient } from './registerClient';

/** Where the workload's recipes live, under the run's root. */
export interface ChaosPaths {
  readonly mutex: string;
  readonly rw: string;
  readonly sem: string;
  readonly latch: string;
  readonly selector: string;
  readonly queue: string;
  readonly queueLocks: string;
}

export function chaosPaths(root: string): ChaosPaths {
  return {
    mutex: `${root}/mutex`,
    rw: `${root}/rw`,
    sem: `${root}/sem`,
    latch: `${root}/latch`,
    selector: `${root}/selector`,
    queue: `${root}/queue`,
    queueLocks: `${root}/queue-locks`,
  };
}

/** The semaphore's limit. */
export const SEMAPHORE_LEASES = 3;

export interface WorkloadContext {
  readonly client: ZkClient;
  readonly index: number;
  readonly paths: ChaosPaths;
  readonly rng: Random;
  readonly register: RegisterClient;
  readonly emit: (event: HistoryEvent) => void;
  /** What every acquire is given as `timeoutMs`. */
  readonly acquireTimeoutMs: number;
}

/** Why a signal aborted, in a word. */
function reasonOf(reason: unknown): string {
  if (reason instanceof LockLostError) return reason.reason;
  if (reason instanceof Error) return reason.name;
  return String(reason);
}

function describeError(err: unknown): { error: string; untyped: boolean } {
  if (err instanceof ZkError) return { error: `${err.name} ${err.code}: ${err.message}`, untyped: false };
  if (err instanceof Error) return { error: `${err.name}: ${err.message}`, untyped: true };
  return { error: String(err), untyped: true };
}

/** Resolves after `ms`, or as soon as `signal` aborts (never rejects). */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * The workload of one worker. `start()` runs every loop; `stop()` ends them and lets go of
 * everything (leases released, latch, selector and queue closed).
 */
export class Workload {
  private running = false;
  private producing = false;
  private nextId = 0;
  private readonly ended = new Set<string>();
  private readonly loops: Promise<void>[] = [];
  private readonly stopping = new AbortController();
  /** The reason acquires are aborted with when the workload stops: not a failure. */
  private readonly stopReason = new Error('the workload stops');
  private queue: DistributedQueue<{ id: string }> | undefined;
  private selector: LeaderSelector | undefined;
  /** Set by the nemesis: freeze this process in the middle of a read-modify-write until then. */
  private freezeArmedUntil = 0;

  constructor(private readonly c: WorkloadContext) {}

  start(): void {
    this.running = true;
    this.producing = true;
    this.spawn('mutex', () => this.mutexLoop('mutex', new InterProcessMutex(this.c.client, this.c.paths.mutex), { thinkMs: [10, 80], holdMs: [5, 40], tryEvery: 8 }));
    this.spawn('rw', () => this.rwLoop());
    const semaphore = new InterProcessSemaphoreV2(this.c.client, this.c.paths.sem, { maxLeases: SEMAPHORE_LEASES });
    this.spawn('sem-1', () => this.semaphoreLoop('sem-1', semaphore));
    this.spawn('sem-2', () => this.semaphoreLoop('sem-2', semaphore));
    this.spawn('latch', () => this.latchLoop());
    this.startSelector();
    this.startQueue();
    this.spawn('producer', () => this.produce());
  }

  /** Contention: `flows` more flows on the mutex for `durationMs`, sharing one mutex object (as threads share one in Curator). */
  burst(flows: number, durationMs: number): void {
    const until = now() + durationMs;
    const mutex = new InterProcessMutex(this.c.client, this.c.paths.mutex);
    for (let i = 0; i < flows; i++) {
      this.spawn(`burst-${this.nextId++}`, (flow) => this.mutexLoop(flow, mutex, { thinkMs: [0, 5], holdMs: [1, 10], tryEvery: 0, until }));
    }
  }

  /**
   * The next holder about to write to the register freezes the whole process (SIGSTOP to itself):
   * a long GC pause at the worst moment, with a stale write to come once thawed. The runner thaws
   * it. Armed for 4 s only: the runner waits 5 s for the freeze, then freezes the
   * process itself, and must not find it freezing again later with nobody to thaw it.
   */
  armFreeze(): void {
    this.freezeArmedUntil = now() + 4_000;
  }

  stopProducing(): void {
    this.producing = false;
  }

  /** Ends every loop and lets go of everything; resolves once done. */
  async stop(): Promise<void> {
    this.running = false;
    this.producing = false;
    this.stopping.abort(this.stopReason);
    // The selector first: with autoRequeue it would otherwise go on taking leadership while a
    // slow loop ends.
    const selectorClosed = this.selector?.close();
    await Promise.all(this.loops);
    await Promise.all([selectorClosed, this.queue?.close()]);
  }

  // ---------------------------------------------------------------- bookkeeping

  private id(prefix: string): string {
    return `w${this.c.index}-${prefix}${this.nextId++}`;
  }

  private spawn(flow: string, loop: (flow: string) => Promise<void>): void {
    this.loops.push(
      loop(flow).catch((err: unknown) => {
        this.c.emit({ type: 'note', at: now(), worker: this.c.index, what: 'unexpected', detail: `loop ${flow} ended: ${describeError(err).error}` });
      }),
    );
  }

  private beginHold(kind: HoldKind, lock: string, flow: string, token?: bigint, node?: string, aborted = false): string {
    const hold = this.id('h');
    this.c.emit({
      type: 'hold-begin',
      at: now(),
      worker: this.c.index,
      kind,
      lock,
      hold,
      flow,
      ...(token !== undefined ? { token: token.toString() } : {}),
      ...(node !== undefined ? { node } : {}),
      session: `0x${this.c.client.sessionId.toString(16)}`,
      ...(aborted ? { aborted: true as const } : {}),
    });
    return hold;
  }

  /** Ends a hold once; later calls do nothing. Returns whether this call ended it. */
  private endHold(hold: string, how: 'release' | 'lost' | 'fenced' | 'stop', reason?: string): boolean {
    if (this.ended.has(hold)) return false;
    this.ended.add(hold);
    this.c.emit({ type: 'hold-end', at: now(), worker: this.c.index, hold, how, ...(reason !== undefined ? { reason } : {}) });
    return true;
  }

  /** Releases a lease, after the hold's end, and records how long that took. */
  private async release(hold: string, release: () => Promise<void>): Promise<void> {
    const startedAt = now();
    try {
      await release();
      this.c.emit({ type: 'release', at: now(), worker: this.c.index, hold, releaseMs: now() - startedAt });
    } catch (err) {
      this.c.emit({ type: 'release', at: now(), worker: this.c.index, hold, releaseMs: now() - startedAt, error: describeError(err).error });
    }
  }

  /** Runs one acquire call and records it. */
  private async acquire<T>(kind: HoldKind, lock: string, askedMs: number, call: () => Promise<T | undefined>): Promise<T | undefined> {
    const at = now();
    const callId = this.id('a');
    try {
      const got = await call();
      this.c.emit({ type: 'acquire', at, worker: this.c.index, kind, lock, call: callId, askedMs, outcome: got === undefined ? 'none' : 'held', endAt: now() });
      return got;
    } catch (err) {
      if (err === this.stopReason) {
        this.c.emit({ type: 'acquire', at, worker: this.c.index, kind, lock, call: callId, askedMs, outcome: 'stopped', endAt: now() });
        return undefined;
      }
      const outcome = err instanceof LockTimeoutError ? 'timeout' : 'error';
      this.c.emit({ type: 'acquire', at, worker: this.c.index, kind, lock, call: callId, askedMs, outcome, endAt: now(), ...describeError(err) });
      return undefined;
    }
  }

  /**
   * Holds a lease: records the hold, runs `work` under its signal, and lets go as soon as the work
   * ends, the signal aborts, or the register fences the hold off.
   */
  private async holdLease(kind: HoldKind, lock: string, flow: string, lease: Lease, work: (hold: string, signal: AbortSignal) => Promise<'ok' | 'fenced'>): Promise<void> {
    const signal = lease.signal;
    const hold = this.beginHold(kind, lock, flow, lease.fencingToken, lease.node, signal.aborted);
    const onLost = () => this.endHold(hold, 'lost', reasonOf(signal.reason));
    if (signal.aborted) onLost();
    else signal.addEventListener('abort', onLost, { once: true });
    let outcome: 'ok' | 'fenced' = 'ok';
    try {
      if (!signal.aborted) outcome = await work(hold, signal);
    } finally {
      signal.removeEventListener('abort', onLost);
      this.endHold(hold, outcome === 'fenced' ? 'fenced' : this.running ? 'release' : 'stop');
      await this.release(hold, () => lease.release());
    }
  }

  /**
   * Read, work for `workMs`, then write back plus one, all under `token`: a read-modify-write whose
   * window is the whole hold, as real work has, so a holder frozen in the middle comes back to
   * write late. 'fenced' when the register refused the read or the write.
   */
  private async increment(res: string, token: bigint, hold: string, signal: AbortSignal, workMs: number): Promise<'ok' | 'fenced'> {
    const base = { res, token: token.toString(), hold, worker: this.c.index };
    const read = await this.c.register.call({ ...base, op: 'read' });
    if (!read.accepted) return 'fenced';
    await pause(workMs, signal);
    // A careful holder looks at its signal before it writes...
    if (signal.aborted) return 'ok';
    if (now() < this.freezeArmedUntil) {
      // ...and a long GC pause right after that look lets it write with a lease that expired
      // meanwhile: on waking, this code runs on before the client has heard anything. That write
      // is the register's to refuse.
      this.freezeArmedUntil = 0;
      this.c.emit({ type: 'note', at: now(), worker: this.c.index, what: 'freezing', detail: `${hold} freezes just before its write of ${res} (token ${token})` });
      process.kill(process.pid, 'SIGSTOP');
    }
    const value = read.value ?? 0;
    const written = await this.c.register.call({ ...base, op: 'write', expect: value, value: value + 1 });
    return written.accepted ? 'ok' : 'fenced';
  }

  private range([min, max]: readonly [number, number]): number {
    return this.c.rng.int(min, max);
  }

  /**
   * Mostly short holds; now and then a long one (up to 6 s, longer than a session timeout), so that
   * a partition can begin in the middle of a hold and outlast the session: the case where a holder
   * must hear of its loss before the server lets anyone else in.
   */
  private holdTime(usual: readonly [number, number]): number {
    if (this.c.rng.chance(0.01)) return this.c.rng.int(1_000, 6_000);
    if (this.c.rng.chance(0.04)) return this.c.rng.int(300, 1_000);
    return this.range(usual);
  }

  // ---------------------------------------------------------------- the loops

  private async mutexLoop(
    flow: string,
    mutex: InterProcessMutex,
    o: { thinkMs: [number, number]; holdMs: [number, number]; tryEvery: number; until?: number },
  ): Promise<void> {
    const lock = this.c.paths.mutex;
    while (this.running && (o.until === undefined || now() < o.until)) {
      const useTry = o.tryEvery > 0 && this.c.rng.int(1, o.tryEvery) === 1;
      const lease = await this.acquire('mutex', lock, useTry ? 0 : this.c.acquireTimeoutMs, () =>
        useTry ? mutex.tryAcquire() : mutex.acquire({ timeoutMs: this.c.acquireTimeoutMs, signal: this.stopping.signal }),
      );
      if (lease) {
        const holdMs = this.holdTime(o.holdMs);
        await this.holdLease('mutex', lock, flow, lease, (hold, signal) => this.increment('mutex', lease.fencingToken, hold, signal, holdMs));
      }
      await pause(this.range(o.thinkMs), this.stopping.signal);
    }
  }

  private async rwLoop(): Promise<void> {
    const rw = new InterProcessReadWriteLock(this.c.client, this.c.paths.rw);
    const lock = this.c.paths.rw;
    while (this.running) {
      const writer = this.c.rng.chance(0.3);
      const kind: HoldKind = writer ? 'rw-write' : 'rw-read';
      const m = writer ? rw.writeLock() : rw.readLock();
      const lease = await this.acquire(kind, lock, this.c.acquireTimeoutMs, () => m.acquire({ timeoutMs: this.c.acquireTimeoutMs, signal: this.stopping.signal }));
      if (lease) {
        const holdMs = this.holdTime([5, 40]);
        await this.holdLease(kind, lock, 'rw', lease, async (hold, signal) => {
          if (writer) return this.increment('rw', lease.fencingToken, hold, signal, holdMs);
          // A reader checks at the end of its hold that no writer is inside: the moment a frozen
          // reader comes back is the moment it could read a writer's half-done work.
          await pause(holdMs, signal);
          if (signal.aborted) return 'ok';
          const checked = await this.c.register.call({ res: 'rw', op: 'check', token: lease.fencingToken.toString(), hold, worker: this.c.index });
          return checked.accepted ? 'ok' : 'fenced';
        });
      }
      await pause(this.c.rng.int(10, 80), this.stopping.signal);
    }
  }

  private async semaphoreLoop(flow: string, semaphore: InterProcessSemaphoreV2): Promise<void> {
    const lock = this.c.paths.sem;
    while (this.running) {
      const leases = await this.acquire('sem', lock, this.c.acquireTimeoutMs, () => semaphore.acquire({ timeoutMs: this.c.acquireTimeoutMs, signal: this.stopping.signal }));
      const lease = leases?.[0];
      if (lease) {
        const holdMs = this.c.rng.int(10, 80);
        await this.holdLease('sem', lock, flow, lease, async (hold, signal) => {
          const base = { res: 'sem', token: lease.fencingToken.toString(), hold, worker: this.c.index };
          await this.c.register.call({ ...base, op: 'enter' });
          await pause(holdMs, signal);
          await this.c.register.call({ ...base, op: 'exit' });
          return 'ok';
        });
      }
      await pause(this.c.rng.int(10, 80), this.stopping.signal);
    }
  }

  /**
   * One latch after another: each leads for a term of its own (1 to 8 s), then closes and a new
   * one joins at the end of the line, so leadership keeps moving between workers. Terms
   * of up to 8 s outlast a session timeout, so a partition can fall in the middle of one.
   */
  private async latchLoop(): Promise<void> {
    const lock = this.c.paths.latch;
    while (this.running) {
      const latch = new LeaderLatch(this.c.client, lock, { id: `w${this.c.index}` });
      let hold: string | undefined;
      let leadership: AbortController | undefined;
      let termEndsAt = Infinity;
      let fenced = false;
      const leaderWork = async (current: string, signal: AbortSignal) => {
        const token = await this.nodeToken(latch.ourPath, current);
        while (token !== undefined && !signal.aborted && this.running) {
          if ((await this.increment('latch', token, current, signal, this.c.rng.int(20, 100))) === 'fenced') {
            fenced = true;
            return;
          }
          await pause(this.c.rng.int(10, 50), signal);
        }
      };
      latch.on('isLeader', () => {
        const current = this.beginHold('latch', lock, 'latch');
        hold = current;
        leadership = new AbortController();
        termEndsAt = now() + this.c.rng.int(1_000, 8_000);
        leaderWork(current, leadership.signal).catch(() => undefined);
      });
      latch.on('notLeader', () => {
        if (hold !== undefined) this.endHold(hold, 'lost', 'notLeader');
        leadership?.abort();
        hold = undefined;
        termEndsAt = Infinity;
      });
      latch.start();
      while (this.running && !fenced && now() < termEndsAt) await pause(50, this.stopping.signal);
      const last = hold;
      hold = undefined;
      leadership?.abort();
      if (last !== undefined) {
        this.endHold(last, fenced ? 'fenced' : this.running ? 'release' : 'stop');
        await this.release(last, () => latch.close());
      } else await latch.close();
      await pause(this.c.rng.int(100, 500), this.stopping.signal);
    }
  }

  /** A selector that requeues itself; each leadership is a term of 0.3 to 6 s of increments. */
  private startSelector(): void {
    const lock = this.c.paths.selector;
    const id = `w${this.c.index}`;
    this.selector = new LeaderSelector(this.c.client, lock, {
      id,
      autoRequeue: true,
      takeLeadership: async (signal) => {
        const hold = this.beginHold('selector', lock, 'selector');
        const onLost = () => this.endHold(hold, 'lost', reasonOf(signal.reason));
        if (signal.aborted) onLost();
        else signal.addEventListener('abort', onLost, { once: true });
        let fenced = false;
        try {
          const token = await this.selectorToken(lock, id, hold);
          const termEndsAt = now() + this.c.rng.int(300, 6_000);
          while (token !== undefined && !signal.aborted && this.running && now() < termEndsAt) {
            if ((await this.increment('selector', token, hold, signal, this.c.rng.int(20, 80))) === 'fenced') {
              fenced = true;
              break;
            }
            await pause(this.c.rng.int(5, 20), signal);
          }
        } finally {
          signal.removeEventListener('abort', onLost);
          this.endHold(hold, fenced ? 'fenced' : this.running ? 'release' : 'stop');
        }
      },
    });
    this.selector.start();
  }

  /** A latch's token: its node's czxid (the lowest live node leads, so leaders' czxids increase). */
  private async nodeToken(node: string | undefined, hold: string): Promise<bigint | undefined> {
    if (node === undefined) return undefined;
    try {
      const stat = await this.c.client.exists(node);
      if (stat === null || stat.ephemeralOwner !== this.c.client.sessionId) return undefined;
      this.c.emit({ type: 'hold-token', at: now(), worker: this.c.index, hold, token: stat.czxid.toString(), node });
      return stat.czxid;
    } catch {
      return undefined;
    }
  }

  /** A selector leader's token: the czxid of the first lock node, if it is ours (our id, our session). */
  private async selectorToken(lock: string, id: string, hold: string): Promise<bigint | undefined> {
    try {
      const [first] = sortLockNodes(await this.c.client.getChildren(lock), ['lock-']);
      if (first === undefined) return undefined;
      const node = `${lock}/${first}`;
      const { data, stat } = await this.c.client.getData(node);
      if (data.toString('utf8') !== id || stat.ephemeralOwner !== this.c.client.sessionId) return undefined;
      this.c.emit({ type: 'hold-token', at: now(), worker: this.c.index, hold, token: stat.czxid.toString(), node });
      return stat.czxid;
    } catch {
      return undefined;
    }
  }

  private startQueue(): void {
    this.queue = new DistributedQueue<{ id: string }>(this.c.client, this.c.paths.queue, { lockPath: this.c.paths.queueLocks });
    this.queue.start(async (item, context) => {
      const at = now();
      const base = { type: 'consume' as const, at, worker: this.c.index, item: item.id, queueNode: context.node };
      await pause(this.c.rng.int(5, 30), context.signal);
      if (context.signal.aborted) {
        this.c.emit({ ...base, endAt: now(), outcome: 'lost' });
        throw context.signal.reason;
      }
      if (this.c.rng.chance(0.05)) {
        this.c.emit({ ...base, endAt: now(), outcome: 'failed' });
        throw new Error('failed on purpose: the item goes back to the queue');
      }
      this.c.emit({ ...base, endAt: now(), outcome: 'done' });
    });
  }

  private async produce(): Promise<void> {
    const queue = this.queue as DistributedQueue<{ id: string }>;
    let n = 0;
    while (this.running && this.producing) {
      const item = `w${this.c.index}-q${n++}`;
      const at = now();
      try {
        await queue.put({ id: item }, { signal: this.stopping.signal });
        this.c.emit({ type: 'put', at, worker: this.c.index, item, endAt: now(), outcome: 'ok' });
      } catch (err) {
        this.c.emit({ type: 'put', at, worker: this.c.index, item, endAt: now(), outcome: 'failed', error: describeError(err).error });
      }
      await pause(this.c.rng.int(100, 300), this.stopping.signal);
    }
  }
}
