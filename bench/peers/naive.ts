/**
 * A NAIVE lock, built for the benchmark only, to show the herd effect: one EPHEMERAL node
 * (`/naive/lock`); to acquire, create it; when it exists, watch it with `exists` and, when it is
 * deleted, race everyone else to create it again. Every release wakes every waiter, and every
 * waiter answers with a create (all but one fail) and a new exists. Runs on zk-recipes' ZkClient.
 */
import { isZkError, ZkClient } from '../../src';
import { HoldCounter, clockUs } from './clock';
import { connectStringOf, type HandoffRun, type Spread } from './types';

export const NAIVE_LOCK_PATH = '/naive/lock';

export class NaiveLock {
  readonly label = 'naive lock (bench only: exists + create race)';
  private clients: ZkClient[] = [];
  private queued: { armed: Promise<void>; release: () => Promise<void>; done: Promise<void>; run: HandoffRun; counter: HoldCounter } | undefined;

  constructor(
    /** Session i connects to `connectStringOf(spread, i)`. */
    private readonly spread: Spread,
    private readonly sessionTimeoutMs: number,
  ) {}

  async open(sessions: number): Promise<void> {
    await this.closeSessions();
    for (let i = 0; i < sessions; i++) {
      const client = new ZkClient({ connectString: connectStringOf(this.spread, i), sessionTimeoutMs: this.sessionTimeoutMs });
      this.clients.push(client);
      client.start();
    }
    for (const client of this.clients) {
      await client.blockUntilConnected({ timeoutMs: 30_000 });
    }
    await this.clients[0].ensurePath('/naive');
  }

  async closeSessions(): Promise<void> {
    const clients = this.clients;
    this.clients = [];
    this.queued = undefined;
    await Promise.all(clients.map((c) => c.close()));
  }

  /** Takes the lock on session 0, then starts `waiters` waiters over the sessions. */
  async handoffQueue(waiters: number, holdMs: number): Promise<void> {
    if (this.queued) throw new Error('a hand-off is already queued');
    const n = this.clients.length;
    const counter = new HoldCounter();
    const run: HandoffRun = { acquiredUs: new Array<number>(waiters + 1).fill(0), releasedUs: new Array<number>(waiters + 1).fill(0), violations: 0 };
    const holder = this.clients[0];
    await holder.create(NAIVE_LOCK_PATH, { mode: 'EPHEMERAL' });
    counter.enter();
    run.acquiredUs[0] = clockUs();
    let armedCount = 0;
    let allArmed!: () => void;
    const armed = new Promise<void>((resolve) => (allArmed = resolve));
    const waiting: Array<Promise<void>> = [];
    for (let k = 1; k <= waiters; k++) {
      const client = this.clients[(k - 1) % n];
      waiting.push(
        (async () => {
          let first = true;
          for (;;) {
            try {
              await client.create(NAIVE_LOCK_PATH, { mode: 'EPHEMERAL' });
              break;
            } catch (err) {
              if (!isZkError(err, 'NODEEXISTS')) throw err;
            }
            let wake!: () => void;
            const woke = new Promise<void>((resolve) => (wake = resolve));
            const stat = await client.exists(NAIVE_LOCK_PATH, { watcher: () => wake() });
            if (stat === null) continue;
            if (first) {
              first = false;
              if (++armedCount === waiters) allArmed();
            }
            await woke;
          }
          counter.enter();
          run.acquiredUs[k] = clockUs();
          if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
          run.releasedUs[k] = clockUs();
          counter.leave();
          await client.delete(NAIVE_LOCK_PATH);
        })(),
      );
    }
    if (waiters === 0) allArmed();
    const done = Promise.allSettled(waiting).then((results) => {
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    });
    done.catch(() => undefined);
    this.queued = {
      armed,
      run,
      counter,
      done,
      release: async () => {
        run.releasedUs[0] = clockUs();
        counter.leave();
        await holder.delete(NAIVE_LOCK_PATH);
      },
    };
  }

  /** Resolves once every waiter has its watch set. */
  async handoffArmed(): Promise<void> {
    const q = this.queued;
    if (!q) throw new Error('no hand-off is queued');
    // A waiter that fails before its watch is set ends `done` early.
    await Promise.race([q.armed, q.done]);
  }

  async handoffRun(): Promise<HandoffRun> {
    const q = this.queued;
    if (!q) throw new Error('no hand-off is queued');
    this.queued = undefined;
    await q.release();
    await q.done;
    q.run.violations = q.counter.violations;
    return q.run;
  }
}
