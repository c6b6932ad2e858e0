import { InterProcessSemaphoreV2, LockLostError, LockTimeoutError, type Lease } from '../../../recipes/locks';
import { SharedCount } from '../../../recipes/shared';
import { type ZkClient } from '../../../src';
import { expireSession } from '../../../src/testing';
import { StateRecorder, childrenOf, eventually, nextEvent, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';

describe('InterProcessSemaphoreV2', () => {
  const zk = useZooKeeper();
  let path: string;

  beforeEach(() => {
    path = `${randomRoot('sem')}/sem`;
  });

  const connect = () => zk.clients.connect({ connectString: zk.server.connectString });
  const leases = (client: ZkClient) => childrenOf(client, `${path}/leases`);
  const queued = (client: ZkClient) => childrenOf(client, `${path}/locks`);

  it('never lets more than maxLeases be held: 4 sessions x 3 flows, qty 1 and 2', async () => {
    const sessions = await Promise.all([connect(), connect(), connect(), connect()]);
    const maxLeases = 3;
    let inside = 0;
    let maxInside = 0;
    const flows = sessions.flatMap((client, s) =>
      Array.from({ length: 3 }, () => new InterProcessSemaphoreV2(client, path, { maxLeases })).map(async (semaphore, f) => {
        for (let i = 0; i < 3; i++) {
          const qty = 1 + ((s + f + i) % 2);
          const got = await semaphore.acquire({ qty, timeoutMs: timing(60_000) });
          expect(got).toHaveLength(qty);
          inside += qty;
          maxInside = Math.max(maxInside, inside);
          // Hold a little, so that holders overlap and an excess would show.
          await new Promise((r) => setTimeout(r, 10));
          inside -= qty;
          await semaphore.returnAll(got);
        }
      }),
    );
    await Promise.all(flows);
    expect(maxInside).toBeLessThanOrEqual(maxLeases);
    expect(maxInside).toBeGreaterThan(1);
    expect(await leases(sessions[0])).toEqual([]);
    expect(await queued(sessions[0])).toEqual([]);
  });

  it('queues acquirers FIFO behind its internal mutex; only the head waiter has a lease node', async () => {
    const holderClient = await connect();
    const [holder] = await new InterProcessSemaphoreV2(holderClient, path, { maxLeases: 1 }).acquire();
    const order: number[] = [];
    const waiters: Array<Promise<void>> = [];
    for (let i = 0; i < 4; i++) {
      const client = await connect();
      const before = (await queued(client)).length;
      waiters.push(
        new InterProcessSemaphoreV2(client, path, { maxLeases: 1 }).acquire({ timeoutMs: timing(30_000) }).then(async ([lease]) => {
          order.push(i);
          await lease.release();
        }),
      );
      waiters[i].catch(() => undefined);
      await eventually(`waiter ${i} queued`, async () => (await queued(client)).length > before);
    }
    // The head waiter holds the mutex and has its lease node; the three others queue on the mutex.
    await eventually('the head waiter to have its lease node', async () => (await leases(holderClient)).length === 2);
    expect(await queued(holderClient)).toHaveLength(4);
    await holder.release();
    await Promise.all(waiters);
    expect(order).toEqual([0, 1, 2, 3]);
  });

  it('takes maxLeases from a SharedCount: raising it lets a waiter through', async () => {
    const a = await connect();
    const b = await connect();
    const countA = new SharedCount(a, `${path}-max`, 1);
    const countB = new SharedCount(b, `${path}-max`, 1);
    await Promise.all([countA.start(), countB.start()]);
    try {
      const [first] = await new InterProcessSemaphoreV2(a, path, { count: countA }).acquire();
      const semaphoreB = new InterProcessSemaphoreV2(b, path, { count: countB });
      expect(semaphoreB.maxLeases).toBe(1);
      const pending = semaphoreB.acquire({ timeoutMs: timing(20_000) });
      pending.catch(() => undefined);
      await eventually('the waiter to have its lease node', async () => (await leases(a)).length === 2);
      await countA.setCount(2);
      const [second] = await pending;
      expect(semaphoreB.maxLeases).toBe(2);
      expect(first.released).toBe(false);
      expect(await leases(a)).toHaveLength(2);
      await Promise.all([first.release(), second.release()]);
    } finally {
      countA.close();
      countB.close();
    }
  });

  it('acquires qty > 1 all or none; timeouts and aborts leave no node behind', async () => {
    const a = await connect();
    const b = await connect();
    const semA = new InterProcessSemaphoreV2(a, path, { maxLeases: 3 });
    const semB = new InterProcessSemaphoreV2(b, path, { maxLeases: 3 });
    const two = await semA.acquire({ qty: 2 });
    expect(new Set(two.map((l) => l.node)).size).toBe(2);
    for (const lease of two) expect(lease.node).toMatch(new RegExp(`^${path}/leases/_c_[0-9a-f-]{36}-lease-\\d{10}$`));
    expect(two[1].fencingToken).toBeGreaterThan(two[0].fencingToken);
    expect(await semA.getParticipantNodes()).toEqual(two.map((l) => l.node));

    // One slot is free: two cannot be had without waiting, and the one taken on the way is given back.
    expect(await semB.tryAcquire({ qty: 2, timeoutMs: timing(10_000) })).toBeUndefined();
    expect(await leases(a)).toHaveLength(2);
    await expect(semB.acquire({ qty: 2, timeoutMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    // A timed-out acquire returns by its deadline and leaves its nodes' deletes to the background.
    await eventually('the timed-out nodes to go', async () => (await leases(a)).length === 2 && (await queued(a)).length === 0);

    const controller = new AbortController();
    const pending = semB.acquire({ qty: 2, signal: controller.signal });
    pending.catch(() => undefined);
    await eventually('the acquirer to wait for its second slot', async () => (await leases(a)).length === 4);
    const reason = new Error('no longer needed');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await eventually('the aborted nodes to go', async () => (await leases(a)).length === 2 && (await queued(a)).length === 0);

    const one = await semB.tryAcquire({ timeoutMs: timing(10_000) });
    expect(one).toHaveLength(1);
    await semA.returnAll(two);
    const more = await semB.acquire({ qty: 2, timeoutMs: timing(10_000) });
    expect(await leases(a)).toHaveLength(3);
    await semB.returnAll([...(one as Lease[]), ...more]);
    expect(await leases(a)).toEqual([]);
  });

  it("aborts a lease's signal when its session expires; a waiter whose session expires starts again", async () => {
    const a = await connect();
    const b = await connect();
    const [lease] = await new InterProcessSemaphoreV2(a, path, { maxLeases: 1 }).acquire();
    const pending = new InterProcessSemaphoreV2(b, path, { maxLeases: 1 }).acquire({ timeoutMs: timing(30_000) });
    // Awaited below; this only keeps an early failure from leaving it unobserved when the clients close.
    pending.catch(() => undefined);
    await eventually('the waiter to have its lease node', async () => (await leases(a)).length === 2);
    const waiterNode = (await leases(a)).find((n) => lease.node.split('/').pop() !== n);

    // The waiter loses its session: its nodes go, and it queues again with new ones.
    await expireSession(b);
    await eventually('the waiter to queue again', async () => {
      const now = await leases(a);
      return now.length === 2 && !now.includes(waiterNode as string);
    });

    const lost = nextEvent<unknown>((done) => lease.signal.addEventListener('abort', () => done(lease.signal.reason), { once: true }), "the lease's abort");
    await expireSession(a);
    const reason = await lost;
    expect(reason).toBeInstanceOf(LockLostError);
    // Taking the session over drops our connection first: SUSPENDED under the 'standard' policy.
    expect(['SUSPENDED', 'LOST', 'NODE_DELETED']).toContain((reason as LockLostError).reason);
    const [next] = await pending;
    expect(next.signal.aborted).toBe(false);
    await lease.release();
    await next.release();
  });

  // The internal mutex queues acquirers only while its node lives: a lease node made in a later
  // session than the mutex node would let the next acquirer in beside us, and with maxLeases 1 both
  // would wait for a slot that neither can take.
  it('an acquirer whose session ends between winning the mutex and creating its lease node starts again', async () => {
    const [h, a, b] = await Promise.all([connect(), connect(), connect()]);
    const [held] = await new InterProcessSemaphoreV2(h, path, { maxLeases: 1 }).acquire();
    // The fault lands exactly there: a's first lease create waits until its session has been replaced.
    const states = new StateRecorder(a);
    const create = a.createAndListParent.bind(a);
    let struck = false;
    let leaseCreates = 0;
    a.createAndListParent = async (p, options) => {
      if (!p.startsWith(`${path}/leases/`)) return create(p, options);
      if (!struck) {
        struck = true;
        const mark = states.mark();
        await expireSession(a);
        await states.waitForNewSession(mark);
      }
      const created = await create(p, options);
      leaseCreates++;
      return created;
    };
    const aGot = new InterProcessSemaphoreV2(a, path, { maxLeases: 1 }).acquire({ timeoutMs: timing(60_000) });
    aGot.catch(() => undefined);
    /** The children of `parent` that `client`'s session owns. */
    const nodesOf = async (client: ZkClient, parent: string) => {
      const children = await childrenOf(h, parent);
      const stats = await Promise.all(children.map((c) => h.exists(`${parent}/${c}`)));
      return children.filter((_, i) => stats[i]?.ephemeralOwner === client.sessionId);
    };
    const ownedBy = async (client: ZkClient, parent: string) => (await nodesOf(client, parent)).length > 0;
    // The struck create lands in the new session too, and a deletes that node before it starts
    // again: only the second create's node is the one a waits with, holding the internal mutex.
    await eventually("a's second lease node, in its new session", async () => leaseCreates >= 2 && ownedBy(a, `${path}/leases`));
    const bGot = new InterProcessSemaphoreV2(b, path, { maxLeases: 1 }).acquire({ timeoutMs: timing(60_000) });
    bGot.catch(() => undefined);
    await eventually('b to contend', async () => (await ownedBy(b, `${path}/locks`)) || ownedBy(b, `${path}/leases`));
    await held.release();
    const [aLease] = await aGot;
    // a holds with one lease node: the struck create's is gone. b, let into the internal mutex as
    // soon as a leaves it, may have made its own lease node by now, to wait with.
    expect(await nodesOf(a, `${path}/leases`)).toEqual([aLease.node.split('/').pop()]);
    const others = (await leases(h)).filter((n) => n !== aLease.node.split('/').pop());
    expect(others).toEqual(others.length === 0 ? [] : await nodesOf(b, `${path}/leases`));
    await aLease.release();
    const [bLease] = await bGot;
    expect(bLease.fencingToken).toBeGreaterThan(aLease.fencingToken);
    await bLease.release();
    expect(await leases(h)).toEqual([]);
  });
});
