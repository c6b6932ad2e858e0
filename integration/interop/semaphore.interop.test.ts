import { InterProcessSemaphoreV2, LockTimeoutError } from '../../recipes/locks';
import { type ZkClient } from '../../src';
import { TestingServer } from '../../src/testing';
import { Clients, childrenOf, eventually, protectedSequential, randomRoot, timing } from '../helpers';
import { CuratorPeer } from './CuratorPeer';

describe('InterProcessSemaphoreV2 interop with Curator 5.x', () => {
  let server: TestingServer;
  let peer: CuratorPeer;
  let zk: ZkClient;
  const clients = new Clients();

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    peer = await CuratorPeer.start(server.connectString, { label: 'sem-peer' });
    zk = await clients.connect({ connectString: server.connectString });
  });
  afterAll(async () => {
    await clients.closeAll();
    await peer?.close();
    await server?.close();
  });

  it('shares maxLeases 2 with Curator on one path, with the same node names', async () => {
    const path = `${randomRoot('interop')}/sem`;
    const ours = new InterProcessSemaphoreV2(zk, path, { maxLeases: 2 });
    await peer.request('semaphore.new', { name: 's', path, maxLeases: 2 });

    // Curator takes both: ours cannot have one.
    expect(await peer.request('semaphore.acquire', { name: 's', qty: 2, timeoutMs: timing(5_000) })).toMatchObject({ acquired: true, leases: 2 });
    expect(await ours.tryAcquire()).toBeUndefined();
    await expect(ours.acquire({ timeoutMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    // A timed-out acquire returns by its deadline and leaves its nodes' deletes to the background.
    await eventually('the timed-out nodes to go', async () => (await childrenOf(zk, `${path}/leases`)).length === 2 && (await childrenOf(zk, `${path}/locks`)).length === 0);

    // Ours waits, holding the internal mutex, with nodes named as Curator names them.
    const pending = ours.acquire({ timeoutMs: timing(20_000) });
    pending.catch(() => undefined);
    await eventually('our acquire to wait for a slot', async () => (await childrenOf(zk, `${path}/leases`)).length === 3);
    const locks = await childrenOf(zk, `${path}/locks`);
    expect(locks).toHaveLength(1);
    expect(locks[0]).toMatch(protectedSequential('lock-'));
    for (const c of await childrenOf(zk, `${path}/leases`)) expect(c).toMatch(protectedSequential('lease-'));

    // Curator gives its leases back: ours gets one, and Curator sees our node among the participants.
    await peer.request('semaphore.releaseAll', { name: 's' });
    const [lease] = await pending;
    const { participants } = await peer.request<{ participants: string[] }>('semaphore.participants', { name: 's' });
    expect(participants).toEqual([lease.node.split('/').pop()]);

    // One each is the limit, counted by both.
    expect(await peer.request('semaphore.acquire', { name: 's', qty: 1, timeoutMs: timing(5_000) })).toMatchObject({ acquired: true, leases: 1 });
    expect(await peer.request('semaphore.acquire', { name: 's', qty: 1, timeoutMs: 200 })).toMatchObject({ acquired: false, leases: 1 });
    expect(await ours.tryAcquire()).toBeUndefined();

    // Curator waits behind our lease, and gets it when ours goes.
    const curatorWaits = peer.request('semaphore.acquire', { name: 's', qty: 1, timeoutMs: timing(20_000) });
    curatorWaits.catch(() => undefined);
    await eventually('Curator to wait for a slot', async () => (await childrenOf(zk, `${path}/leases`)).length === 3);
    const curatorLock = await childrenOf(zk, `${path}/locks`);
    expect(curatorLock).toHaveLength(1);
    expect(curatorLock[0]).toMatch(protectedSequential('lock-'));
    await lease.release();
    expect(await curatorWaits).toMatchObject({ acquired: true, leases: 2 });
    await peer.request('semaphore.releaseAll', { name: 's' });
    expect(await childrenOf(zk, `${path}/leases`)).toEqual([]);
  });

  it('never lets Curator and zk-recipes together hold more than maxLeases', async () => {
    const path = `${randomRoot('interop')}/sem`;
    const maxLeases = 2;
    // What each side surely holds: Curator from its acquire reply until it asks to release; ours
    // from acquire until release. Overlaps of these can only understate the true overlap.
    let held = 0;
    let maxHeld = 0;
    const enter = (n: number) => {
      held += n;
      maxHeld = Math.max(maxHeld, held);
    };
    const hold = () => new Promise((r) => setTimeout(r, 10));

    const javaFlows = ['j1', 'j2'].map(async (name) => {
      await peer.request('semaphore.new', { name, path, maxLeases });
      for (let i = 0; i < 4; i++) {
        const reply = await peer.request<{ acquired: boolean }>('semaphore.acquire', { name, qty: 1, timeoutMs: timing(30_000) });
        expect(reply.acquired).toBe(true);
        enter(1);
        await hold();
        held -= 1;
        await peer.request('semaphore.releaseAll', { name });
      }
    });
    const nodeFlows = [0, 1].map(async () => {
      const semaphore = new InterProcessSemaphoreV2(zk, path, { maxLeases });
      for (let i = 0; i < 4; i++) {
        const [lease] = await semaphore.acquire({ timeoutMs: timing(30_000) });
        enter(1);
        await hold();
        held -= 1;
        await lease.release();
      }
    });
    await Promise.all([...javaFlows, ...nodeFlows]);
    expect(maxHeld).toBeLessThanOrEqual(maxLeases);
    expect(await childrenOf(zk, `${path}/leases`)).toEqual([]);
  });
});
