/** zk-recipes' InterProcessMutex, in this process: one ZkClient per session. */
import { ZkClient } from '../../src';
import { InterProcessMutex } from '../../recipes/locks';
import { HoldCounter, clockUs } from './clock';
import type { ContendedRun, HandoffRun, LockPeer } from './types';

export class ZkRecipesPeer implements LockPeer {
  readonly id = 'zk-recipes' as const;
  readonly usesZooKeeper = true;
  private clients: ZkClient[] = [];
  private readonly uncontendedMutexes = new Map<string, InterProcessMutex>();
  private queued: { release: () => Promise<void>; done: Promise<void>; acquired: number[]; released: number[]; counter: HoldCounter } | undefined;

  constructor(
    private readonly connectString: string,
    private readonly sessionTimeoutMs: number,
    readonly versions: Record<string, string>,
    /** For tables: "zk-recipes 0.1.0". */
    readonly label = 'zk-recipes',
  ) {}

  async open(sessions: number): Promise<void> {
    await this.closeSessions();
    for (let i = 0; i < sessions; i++) {
      const client = new ZkClient({ connectString: this.connectString, sessionTimeoutMs: this.sessionTimeoutMs });
      this.clients.push(client);
      client.start();
    }
    for (const client of this.clients) {
      if (!(await client.blockUntilConnected({ timeoutMs: 30_000 }))) throw new Error(`zk-recipes could not connect to ${this.connectString}`);
    }
  }

  async closeSessions(): Promise<void> {
    const clients = this.clients;
    this.clients = [];
    this.uncontendedMutexes.clear();
    this.queued = undefined;
    await Promise.all(clients.map((c) => c.close()));
  }

  private session(i: number): ZkClient {
    if (this.clients.length === 0) throw new Error('no sessions are open');
    return this.clients[i % this.clients.length];
  }

  async uncontended(path: string, iterations: number): Promise<number[]> {
    let mutex = this.uncontendedMutexes.get(path);
    if (!mutex) this.uncontendedMutexes.set(path, (mutex = new InterProcessMutex(this.session(0), path)));
    const lat: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = clockUs();
      const lease = await mutex.acquire();
      await lease.release();
      lat.push(clockUs() - t0);
    }
    return lat;
  }

  async contended(path: string, durationMs: number): Promise<ContendedRun> {
    const n = this.clients.length;
    if (n === 0) throw new Error('no sessions are open');
    const counter = new HoldCounter();
    const counts = new Array<number>(n).fill(0);
    const holds: Array<[number, number]> = [];
    const t0 = clockUs();
    const deadline = t0 + durationMs * 1000;
    await Promise.all(
      this.clients.map(async (client, k) => {
        const mutex = new InterProcessMutex(client, path);
        while (clockUs() < deadline) {
          const lease = await mutex.acquire();
          counter.enter();
          const start = clockUs();
          const end = clockUs();
          counter.leave();
          await lease.release();
          holds.push([start, end]);
          counts[k]++;
        }
      }),
    );
    return { counts, elapsedMs: (clockUs() - t0) / 1000, violations: counter.violations, holds };
  }

  async handoffQueue(path: string, waiters: number): Promise<void> {
    if (this.queued) throw new Error('a hand-off is already queued');
    const counter = new HoldCounter();
    const acquired = new Array<number>(waiters + 1).fill(0);
    const released = new Array<number>(waiters + 1).fill(0);
    const first = await new InterProcessMutex(this.session(0), path).acquire();
    counter.enter();
    acquired[0] = clockUs();
    const waiting: Array<Promise<void>> = [];
    for (let k = 1; k <= waiters; k++) {
      const mutex = new InterProcessMutex(this.session(k - 1), path);
      waiting.push(
        (async () => {
          const lease = await mutex.acquire();
          counter.enter();
          acquired[k] = clockUs();
          released[k] = clockUs();
          counter.leave();
          await lease.release();
        })(),
      );
    }
    // Settle every waiter before reporting, so a failure cannot go unhandled meanwhile.
    const done = Promise.allSettled(waiting).then((results) => {
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    });
    done.catch(() => undefined);
    this.queued = {
      acquired,
      released,
      counter,
      done,
      release: async () => {
        released[0] = clockUs();
        counter.leave();
        await first.release();
      },
    };
  }

  async handoffRun(): Promise<HandoffRun> {
    const q = this.queued;
    if (!q) throw new Error('no hand-off is queued');
    this.queued = undefined;
    await q.release();
    await q.done;
    return { acquiredUs: q.acquired, releasedUs: q.released, violations: q.counter.violations };
  }

  async shutdown(): Promise<void> {
    await this.closeSessions();
  }
}
