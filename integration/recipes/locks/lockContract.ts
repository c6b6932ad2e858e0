import { InvalidArgumentError, type ZkClient } from '../../../src';
import { LockTimeoutError, NotLockOwnerError, type InterProcessLock, type Lease } from '../../../recipes/locks';
import { TestingServer } from '../../../src/testing';
import { Clients, eventually, randomRoot, timing } from '../../helpers';

export interface LockUnderTest {
  /** A lock object on `path` for `client`. Two objects on one path are separate contenders. */
  make(client: ZkClient, path: string): InterProcessLock;
  /**
   * How the lock re-enters: 'lease' (given the held lease, and inside runExclusive), 'scope' (inside
   * runExclusive only), or false (never: InterProcessSemaphoreMutex).
   */
  reentrant: 'lease' | 'scope' | false;
  /** Lists the nodes a lock on `path` has right now (contenders and holders), to check nothing is left behind. */
  nodes(client: ZkClient, path: string): Promise<string[]>;
}

/**
 * The contract every mutex-shaped lock keeps, run against a real server: Curator's
 * TestInterProcessMutexBase for zk-recipes.
 */
export function describeLockContract(name: string, lut: LockUnderTest): void {
  describe(`${name}: lock contract`, () => {
    let server: TestingServer;
    const clients = new Clients();
    let path: string;

    beforeAll(async () => {
      server = await TestingServer.start({ forceSync: false });
    });
    beforeEach(() => {
      path = `${randomRoot('lock')}/lock`;
    });
    afterEach(() => clients.closeAll());
    afterAll(() => server.close());

    const connect = () => clients.connect({ connectString: server.connectString });

    it('excludes mutually across 3 sessions with 4 async flows each, and fencing tokens rise with each holder', async () => {
      const sessions = await Promise.all([connect(), connect(), connect()]);
      let inside = 0;
      let maxInside = 0;
      const tokens: bigint[] = [];
      const flows = sessions.flatMap((client) =>
        Array.from({ length: 4 }, () => lut.make(client, path)).map(async (lock) => {
          for (let i = 0; i < 4; i++) {
            const lease = await lock.acquire({ timeoutMs: timing(60_000) });
            inside++;
            maxInside = Math.max(maxInside, inside);
            tokens.push(lease.fencingToken);
            // Yield to the event loop while holding, so overlapping holders would show.
            await new Promise((r) => setImmediate(r));
            inside--;
            await lease.release();
          }
        }),
      );
      await Promise.all(flows);
      expect(maxInside).toBe(1);
      expect(tokens).toHaveLength(48);
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
      expect(await lut.nodes(sessions[0], path)).toEqual([]);
    });

    it('hands the lock over in FIFO order', async () => {
      const holderClient = await connect();
      const holder = await lut.make(holderClient, path).acquire();
      const order: number[] = [];
      const waiters: Array<Promise<void>> = [];
      for (let i = 0; i < 5; i++) {
        const client = await connect();
        const before = (await lut.nodes(client, path)).length;
        waiters.push(
          lut
            .make(client, path)
            .acquire({ timeoutMs: timing(30_000) })
            .then(async (lease) => {
              order.push(i);
              await lease.release();
            }),
        );
        // The next waiter asks only once this one is queued.
        await eventually(`waiter ${i} queued`, async () => (await lut.nodes(client, path)).length > before);
      }
      await holder.release();
      await Promise.all(waiters);
      expect(order).toEqual([0, 1, 2, 3, 4]);
    });

    it('times out with LockTimeoutError and leaves no node behind', async () => {
      const a = await connect();
      const b = await connect();
      const held = await lut.make(a, path).acquire();
      const nodesWhileHeld = await lut.nodes(a, path);
      await expect(lut.make(b, path).acquire({ timeoutMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
      await eventually('the timed-out node to go', async () => (await lut.nodes(a, path)).length === nodesWhileHeld.length);
      await held.release();
    });

    it('rejects with the signal reason on abort and leaves no node behind', async () => {
      const a = await connect();
      const b = await connect();
      const held = await lut.make(a, path).acquire();
      const nodesWhileHeld = await lut.nodes(a, path);
      const controller = new AbortController();
      const pending = lut.make(b, path).acquire({ signal: controller.signal });
      await eventually('the waiter queued', async () => (await lut.nodes(a, path)).length > nodesWhileHeld.length);
      const reason = new Error('stop waiting');
      controller.abort(reason);
      await expect(pending).rejects.toBe(reason);
      await eventually('the aborted node to go', async () => (await lut.nodes(a, path)).length === nodesWhileHeld.length);
      await held.release();
    });

    it('tryAcquire never waits', async () => {
      const a = await connect();
      const b = await connect();
      const lockA = lut.make(a, path);
      // A try that should win gets time for its round trips (a lease takes several), however slow
      // the machine; the one that must not wait keeps the default bound.
      const lease = await lockA.tryAcquire({ timeoutMs: timing(10_000) });
      expect(lease).toBeDefined();
      const nodesWhileHeld = await lut.nodes(a, path);
      expect(await lut.make(b, path).tryAcquire()).toBeUndefined();
      // Had the try run out of time with its create in flight, its node goes in the background.
      await eventually("only the holder's nodes", async () => (await lut.nodes(a, path)).length === nodesWhileHeld.length);
      await (lease as Lease).release();
      const again = await lut.make(b, path).tryAcquire({ timeoutMs: timing(10_000) });
      expect(again).toBeDefined();
      await again?.release();
    });

    it('a second acquire from the same async flow is a new contender: it waits, and times out', async () => {
      const a = await connect();
      const lock = lut.make(a, path);
      const outer = await lock.acquire();
      await expect(lock.acquire({ timeoutMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError);
      expect(await lock.tryAcquire()).toBeUndefined();
      await outer.release();
      expect(lock.isAcquiredInThisProcess()).toBe(false);
      await eventually('the timed-out node to go', async () => (await lut.nodes(a, path)).length === 0);
    });

    it('excludes concurrent flows of one process on one lock object: Promise.all, and timers started while it is held', async () => {
      const a = await connect();
      const lock = lut.make(a, path);
      let inside = 0;
      let most = 0;
      const tokens: bigint[] = [];
      const work = async () => {
        const lease = await lock.acquire({ timeoutMs: timing(30_000) });
        inside++;
        most = Math.max(most, inside);
        tokens.push(lease.fencingToken);
        await new Promise((r) => setTimeout(r, 20));
        inside--;
        await lease.release();
      };
      await Promise.all([work(), work(), work()]);
      // A flow that holds the lock starts timers; each timer's acquire waits its turn.
      const held = await lock.acquire();
      const whileHeld = (await lut.nodes(a, path)).length;
      const timers = [1, 2].map(() => new Promise<void>((resolve, reject) => setTimeout(() => work().then(resolve, reject), 10)));
      // Both timers' acquires are queued behind the hold, and neither got in.
      await eventually('both timers queued', async () => (await lut.nodes(a, path)).length >= whileHeld + 2);
      expect(inside).toBe(0);
      await held.release();
      await Promise.all(timers);
      expect(most).toBe(1);
      expect(new Set(tokens).size).toBe(tokens.length);
    });

    if (lut.reentrant) {
      it('re-enters inside runExclusive: nested acquires count, and the lock goes at the last release', async () => {
        const a = await connect();
        const b = await connect();
        const lock = lut.make(a, path);
        await lock.runExclusive(async () => {
          const inner = await lock.acquire({ timeoutMs: timing(1_000) });
          await inner.release();
          expect(lock.isAcquiredInThisProcess()).toBe(true);
          expect(await lut.make(b, path).tryAcquire({ timeoutMs: timing(10_000) })).toBeUndefined();
          // And from a flow the callback starts.
          await new Promise<void>((resolve, reject) => setImmediate(() => lock.acquire({ timeoutMs: timing(1_000) }).then((l) => l.release()).then(resolve, reject)));
        });
        expect(lock.isAcquiredInThisProcess()).toBe(false);
        const other = await lut.make(b, path).tryAcquire({ timeoutMs: timing(10_000) });
        expect(other).toBeDefined();
        await other?.release();
      });
    }

    if (lut.reentrant === 'lease') {
      it('re-enters given the held lease; a lease of another lock is refused', async () => {
        const a = await connect();
        const b = await connect();
        const lock = lut.make(a, path);
        const outer = await lock.acquire();
        const inner = await lock.acquire({ reenter: outer, timeoutMs: timing(1_000) });
        expect(inner.node).toBe(outer.node);
        await inner.release();
        expect(inner.signal.aborted).toBe(true);
        expect(outer.signal.aborted).toBe(false);
        expect(await lut.make(b, path).tryAcquire()).toBeUndefined();
        const otherLock = lut.make(a, `${path}-other`);
        await expect(otherLock.acquire({ reenter: outer })).rejects.toBeInstanceOf(InvalidArgumentError);
        await outer.release();
        expect(lock.isAcquiredInThisProcess()).toBe(false);
      });
    } else {
      it('refuses reenter', async () => {
        const a = await connect();
        const lock = lut.make(a, path);
        const outer = await lock.acquire();
        await expect(lock.acquire({ reenter: outer })).rejects.toBeInstanceOf(InvalidArgumentError);
        await outer.release();
      });
    }

    it('refuses a release by a non-owner; a lease releases once', async () => {
      const a = await connect();
      const lock = lut.make(a, path);
      await expect(lock.release()).rejects.toBeInstanceOf(NotLockOwnerError);
      const lease = await lock.acquire();
      await lease.release();
      await lease.release();
      expect(lease.released).toBe(true);
      await expect(lock.release()).rejects.toBeInstanceOf(NotLockOwnerError);
    });

    it('runExclusive releases when the callback throws, and await using releases at scope end', async () => {
      const a = await connect();
      const lock = lut.make(a, path);
      await expect(
        lock.runExclusive(() => {
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(lock.isAcquiredInThisProcess()).toBe(false);
      expect(await lock.runExclusive((signal) => signal.aborted)).toBe(false);
      {
        await using lease = await lock.acquire();
        expect(lease.signal.aborted).toBe(false);
        expect(lock.isAcquiredInThisProcess()).toBe(true);
      }
      expect(lock.isAcquiredInThisProcess()).toBe(false);
    });
  });
}
