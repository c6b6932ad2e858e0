import { spawn, type ChildProcess } from 'node:child_process';
import type { ZkClient } from '../../../src';
import {
  InterProcessMultiLock,
  InterProcessMutex,
  InterProcessReadWriteLock,
  InterProcessSemaphoreMutex,
  InterProcessSemaphoreV2,
  LockTimeoutError,
  type AcquireOptions,
} from '../../../recipes/locks';
import { FaultProxy, TestingServer } from '../../../src/testing';
import { Clients, StateRecorder, eventually, randomRoot, timing } from '../../helpers';

/** The slack a bound may overrun by: timers and the event loop, on a loaded 2-core machine. */
const SLACK_MS = timing(1_000);

/**
 * The attempt's bound where a test needs the attempt to finish: a first create on a fresh path
 * (container parents included) beside two busy loops on a loaded 2-core machine has taken over the
 * 1 s default. What is under test is that the small timeout does not cut the attempt short.
 */
const ROOMY_ATTEMPT_MS = timing(10_000);

interface Held {
  release(): Promise<void>;
}

/** One kind of lock, seen through what every kind offers: an acquire and a try. */
interface Acquirer {
  acquire(options: AcquireOptions): Promise<Held>;
  tryAcquire(options: { timeoutMs?: number; attemptTimeoutMs?: number }): Promise<Held | undefined>;
}

const kinds: Array<[string, (client: ZkClient, path: string) => Acquirer]> = [
  ['InterProcessMutex', (client, path) => new InterProcessMutex(client, path)],
  ['InterProcessSemaphoreMutex', (client, path) => new InterProcessSemaphoreMutex(client, path)],
  ['the read lock', (client, path) => new InterProcessReadWriteLock(client, path).readLock()],
  ['the write lock', (client, path) => new InterProcessReadWriteLock(client, path).writeLock()],
  ['InterProcessMultiLock', (client, path) => new InterProcessMultiLock(client, [`${path}-a`, `${path}-b`])],
  [
    'InterProcessSemaphoreV2',
    (client, path) => {
      const semaphore = new InterProcessSemaphoreV2(client, path, { maxLeases: 1 });
      const held = (leases: Held[]): Held => ({ release: () => semaphore.returnAll(leases as never) });
      return {
        acquire: async (options) => held(await semaphore.acquire(options)),
        tryAcquire: async (options) => {
          const leases = await semaphore.tryAcquire(options);
          return leases && held(leases);
        },
      };
    },
  ],
];

/**
 * Two busy loops beside the test for its whole run: the small timeouts must win on a loaded
 * machine, where the deadline's timer and the server's reply race hardest.
 */
function busyLoops(): { stop(): void } {
  const loops: ChildProcess[] = [0, 1].map(() => spawn('yes', [], { stdio: ['ignore', 'ignore', 'ignore'] }));
  return {
    stop: () => {
      for (const loop of loops) loop.kill('SIGKILL');
    },
  };
}

describe('small timeouts on a live connection, with two busy loops beside the test', () => {
  let server: TestingServer;
  let loops: { stop(): void };
  const clients = new Clients();

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    loops = busyLoops();
  });
  afterEach(() => clients.closeAll());
  afterAll(async () => {
    loops.stop();
    await server.close();
  });

  const connect = () => clients.connect({ connectString: server.connectString });

  describe.each(kinds)('%s', (name, make) => {
    it.each([0, 1, 5])('acquire({ timeoutMs: %d }) wins the free lock', async (timeoutMs) => {
      const client = await connect();
      const path = `${randomRoot('small')}/lock`;
      // Several rounds: one win could be the race of the deadline and the reply going our way.
      for (let round = 0; round < 5; round++) {
        const held = await make(client, path).acquire({ timeoutMs, attemptTimeoutMs: ROOMY_ATTEMPT_MS });
        await held.release();
      }
    });

    it.each([0, 1, 5])('tryAcquire({ timeoutMs: %d }) wins the free lock', async (timeoutMs) => {
      const client = await connect();
      const path = `${randomRoot('small')}/lock`;
      for (let round = 0; round < 5; round++) {
        const held = await make(client, path).tryAcquire({ timeoutMs, attemptTimeoutMs: ROOMY_ATTEMPT_MS });
        expect(held).toBeDefined();
        await held?.release();
      }
    });

    it('acquire({ timeoutMs: 0 }) on a held lock rejects with LockTimeoutError promptly, leaving no node behind', async () => {
      const [a, b] = [await connect(), await connect()];
      const path = `${randomRoot('small')}/lock`;
      // Readers share: a writer holds the lock a reader waits for.
      const holder = name === 'the read lock' ? await new InterProcessReadWriteLock(a, path).writeLock().acquire() : await make(a, path).acquire({});
      const before = await nodesUnder(a, path);
      const started = performance.now();
      await expect(make(b, path).acquire({ timeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
      // The attempt's round trips, then no wait at all: well inside the attempt's own bound.
      expect(performance.now() - started).toBeLessThan(1_000 + SLACK_MS);
      await eventually('the timed-out attempt to delete its node', async () => (await nodesUnder(a, path)).join() === before.join());
      await holder.release();
    });
  });
});

/**
 * Time limits still hold when the network does not answer: a call ends within timeoutMs plus the
 * attempt's bound; offline (the client knows it has no connection), within timeoutMs.
 */
describe('small timeouts when the server does not answer', () => {
  let server: TestingServer;
  let proxy: FaultProxy;
  const clients = new Clients();

  beforeEach(async () => {
    server = await TestingServer.start({ forceSync: false });
    proxy = await FaultProxy.start(server.connectString);
  });
  afterEach(async () => {
    await clients.closeAll();
    await proxy.close();
    await server.close();
  });

  /** A session (and read timeout) that outlives every bound under test. */
  const connect = () => clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 9_000, connectionTimeoutMs: timing(10_000) });

  async function timed(call: () => Promise<unknown>): Promise<{ outcome: unknown; elapsedMs: number }> {
    const started = performance.now();
    const outcome = await call().catch((err: unknown) => err);
    return { outcome, elapsedMs: performance.now() - started };
  }

  describe.each(kinds)('%s', (_name, make) => {
    it.each([
      [0, 1_000],
      [500, 1_000],
    ])('blackholed: acquire({ timeoutMs: %d, attemptTimeoutMs: %d }) rejects with LockTimeoutError within their sum', async (timeoutMs, attemptTimeoutMs) => {
      const client = await connect();
      const lock = make(client, `${randomRoot('blackhole')}/lock`);
      proxy.blackhole();
      const { outcome, elapsedMs } = await timed(() => lock.acquire({ timeoutMs, attemptTimeoutMs }));
      expect(outcome).toBeInstanceOf(LockTimeoutError);
      // The round trips had their bound past the timeout, and no more.
      expect(elapsedMs).toBeGreaterThanOrEqual(Math.max(timeoutMs, attemptTimeoutMs) - 10);
      expect(elapsedMs).toBeLessThan(timeoutMs + attemptTimeoutMs + SLACK_MS);
    });

    it('blackholed: tryAcquire({ timeoutMs: 0 }) resolves undefined within attemptTimeoutMs', async () => {
      const client = await connect();
      const lock = make(client, `${randomRoot('blackhole')}/lock`);
      proxy.blackhole();
      const { outcome, elapsedMs } = await timed(() => lock.tryAcquire({ timeoutMs: 0, attemptTimeoutMs: 1_000 }));
      expect(outcome).toBeUndefined();
      expect(elapsedMs).toBeLessThan(1_000 + SLACK_MS);
    });

    it('stopped: acquire({ timeoutMs: 0 }) rejects at once once the client knows it is offline', async () => {
      const client = await connect();
      const states = new StateRecorder(client);
      const mark = states.mark();
      const lock = make(client, `${randomRoot('stopped')}/lock`);
      await server.stop();
      await states.waitFor('SUSPENDED', mark);
      const { outcome, elapsedMs } = await timed(() => lock.acquire({ timeoutMs: 0, attemptTimeoutMs: 5_000 }));
      expect(outcome).toBeInstanceOf(LockTimeoutError);
      // Offline, the timeout holds as it stands: the attempt's bound does not apply.
      expect(elapsedMs).toBeLessThan(SLACK_MS);
    });
  });
});

/**
 * The contenders' nodes under a lock's path, at any depth (the semaphore keeps its nodes a level
 * down), and under the multi-lock's two: the ephemeral ones. Their container parents are left
 * out: the server reaps an empty one every 100 ms (the TestingServer's check interval) and the next
 * attempt makes it again, so whether a listing holds one depends on when it was taken, not on what
 * an attempt left behind.
 */
async function nodesUnder(client: ZkClient, path: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (at: string): Promise<void> => {
    let children: string[];
    try {
      children = await client.getChildren(at);
    } catch {
      return;
    }
    for (const child of children.sort()) {
      const node = `${at}/${child}`;
      const stat = await client.exists(node);
      if (stat === null) continue;
      if (stat.ephemeralOwner !== 0n) found.push(node);
      else await walk(node);
    }
  };
  // The multi-lock's two locks are siblings of `path`.
  for (const root of [path, `${path}-a`, `${path}-b`]) await walk(root);
  return found;
}
