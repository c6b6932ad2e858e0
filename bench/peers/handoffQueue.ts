/**
 * The `handoff` scenario's queue, for the peers that run in the bench's process: a holder takes
 * the lock, W waiters queue behind it, and `run()` releases the holder and waits until the lock
 * has passed down the whole queue. Each peer brings only how one holder takes the lock.
 */
import { HoldCounter, clockUs } from './clock';
import type { HandoffRun } from './types';

/** Takes the lock for holder `k` (0: the first holder, then the waiters in queue order); resolves with its release. */
export type TakeLock = (k: number) => Promise<() => Promise<void>>;

/** A queue ready to run: every waiter has asked for the lock. */
export interface QueuedHandoff {
  run(): Promise<HandoffRun>;
  /** Rejects as soon as a holder fails; resolves once every waiter has released (only after `run`). */
  readonly settled: Promise<void>;
}

/**
 * Holds for at least `ms` by the clock, as the JVM's Thread.sleep and Python's time.sleep do.
 * A Node timer alone may fire early: its start is the event loop's time, cached when the loop's
 * turn began, so `setTimeout(1)` late in a busy turn ends well under 1 ms after it was set.
 */
async function hold(ms: number): Promise<void> {
  const until = clockUs() + ms * 1000;
  for (let left = ms; left > 0; left = (until - clockUs()) / 1000) {
    await new Promise((resolve) => setTimeout(resolve, Math.ceil(left)));
  }
}

/** Takes the lock for holder 0, then queues `waiters` more behind it; each holds at least `holdMs` by the clock, then releases. */
export async function queueHandoff(waiters: number, holdMs: number, take: TakeLock): Promise<QueuedHandoff> {
  const counter = new HoldCounter();
  const acquired = new Array<number>(waiters + 1).fill(0);
  const released = new Array<number>(waiters + 1).fill(0);
  const releaseFirst = await take(0);
  counter.enter();
  acquired[0] = clockUs();
  const waiting: Array<Promise<void>> = [];
  for (let k = 1; k <= waiters; k++) {
    waiting.push(
      (async () => {
        const release = await take(k);
        counter.enter();
        acquired[k] = clockUs();
        if (holdMs > 0) await hold(holdMs);
        released[k] = clockUs();
        counter.leave();
        await release();
      })(),
    );
  }
  // Settle every waiter before reporting, so a failure cannot go unhandled meanwhile.
  const done = Promise.allSettled(waiting).then((results) => {
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  });
  done.catch(() => undefined);
  return {
    settled: done,
    run: async () => {
      released[0] = clockUs();
      counter.leave();
      await releaseFirst();
      await done;
      return { acquiredUs: acquired, releasedUs: released, violations: counter.violations };
    },
  };
}
