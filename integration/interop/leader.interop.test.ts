import { LeaderLatch, LeaderSelector } from '../../recipes/leader';
import type { ZkClient } from '../../src';
import { TestingServer } from '../../src/testing';
import { Clients, childrenOf, eventually, randomRoot, timing } from '../helpers';
import { LeadershipLog } from '../recipes/leader/leaderHelpers';
import { CuratorPeer } from './CuratorPeer';

const PROTECTED = '_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-';

describe("LeaderLatch and LeaderSelector with Curator's on the same path", () => {
  let server: TestingServer;
  let peer: CuratorPeer;
  const clients = new Clients();
  const recipes: Array<{ close(): Promise<void> }> = [];
  let client: ZkClient;

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    peer = await CuratorPeer.start(server.connectString, { label: 'curator-leader' });
  });
  beforeEach(async () => {
    client = await clients.connect({ connectString: server.connectString });
  });
  afterEach(async () => {
    await Promise.all(recipes.splice(0).map((r) => r.close()));
    await clients.closeAll();
  });
  afterAll(async () => {
    await peer?.close();
    await server?.close();
  });

  /** Whether Curator's latch or selector `name` leads, and whether ours does: exactly one must. */
  const oneLeader = async (kind: 'latch' | 'selector', name: string, ours: { hasLeadership: boolean }, java = peer): Promise<'java' | 'node'> => {
    const javaLeads = (await java.request<{ leader: boolean }>(`${kind}.hasLeadership`, { name })).leader;
    expect([javaLeads, ours.hasLeadership].filter(Boolean)).toHaveLength(1);
    return javaLeads ? 'java' : 'node';
  };

  it('LeaderLatch: one leader between Curator and zk-recipes, handing over both ways', async () => {
    const path = `${randomRoot('interop')}/latch`;
    await peer.request('latch.new', { name: 'j1', path, participantId: 'java-1' });
    await peer.request('latch.start', { name: 'j1' });
    await peer.waitForEvent({ event: 'isLeader', name: 'j1' });

    const log = new LeadershipLog();
    const ours = new LeaderLatch(client, path, { id: 'node' });
    recipes.push(ours);
    log.trackLatch('node', ours);
    ours.start();
    await eventually('our latch to join', () => ours.ourPath !== undefined);
    expect(ours.ourPath).toMatch(new RegExp(`/${PROTECTED}latch-\\d{10}$`));
    expect(await oneLeader('latch', 'j1', ours)).toBe('java');
    expect(await ours.getLeader()).toEqual({ id: 'java-1', isLeader: true });
    expect((await peer.request<{ ids: string[] }>('latch.participants', { name: 'j1' })).ids).toEqual(['java-1', 'node']);

    // Curator leaves: ours leads, and Curator's next latch sees it as the leader.
    await peer.request('latch.close', { name: 'j1' });
    await ours.await({ timeoutMs: timing(10_000) });
    await peer.request('latch.new', { name: 'j2', path, participantId: 'java-2' });
    await peer.request('latch.start', { name: 'j2' });
    await eventually('Curator to join', async () => (await childrenOf(client, path)).length === 2);
    expect(await peer.request('latch.leader', { name: 'j2' })).toMatchObject({ leaderId: 'node', isLeader: true });
    expect(await oneLeader('latch', 'j2', ours)).toBe('node');

    // Ours leaves: Curator leads.
    const mark = peer.mark();
    await ours.close();
    await peer.waitForEvent({ event: 'isLeader', name: 'j2' }, { since: mark });
    expect((await peer.request<{ leader: boolean }>('latch.hasLeadership', { name: 'j2' })).leader).toBe(true);
    await peer.request('latch.close', { name: 'j2' });
    expect(log.overlaps()).toEqual([]);
  });

  it("LeaderLatch: a Curator leader's session expires; ours takes over, and Curator joins behind it", async () => {
    const path = `${randomRoot('interop')}/latch-expiry`;
    const c = await CuratorPeer.start(server.connectString, { label: 'curator-expiring' });
    try {
      await c.request('latch.new', { name: 'l', path, participantId: 'java' });
      await c.request('latch.start', { name: 'l' });
      await c.waitForEvent({ event: 'isLeader', name: 'l' });
      const ours = new LeaderLatch(client, path, { id: 'node' });
      recipes.push(ours);
      ours.start();
      await eventually('our latch to join', async () => (await childrenOf(client, path)).length === 2);

      const mark = c.mark();
      await c.expireSession();
      await c.waitForEvent({ event: 'notLeader', name: 'l' }, { since: mark });
      await ours.await({ timeoutMs: timing(20_000) });
      await eventually('Curator to join again', async () => (await childrenOf(client, path)).length === 2);
      expect(await oneLeader('latch', 'l', ours, c)).toBe('node');
      expect(await ours.getParticipants()).toEqual([
        { id: 'node', isLeader: true },
        { id: 'java', isLeader: false },
      ]);
    } finally {
      await c.close();
    }
  });

  it('LeaderSelector: one leader between Curator and zk-recipes; each hands over when its leadership ends', async () => {
    const path = `${randomRoot('interop')}/selector`;
    const log = new LeadershipLog();
    const task = log.selectorTask('node');
    const ours = new LeaderSelector(client, path, { id: 'node', autoRequeue: true, takeLeadership: task.takeLeadership });
    recipes.push(ours);
    ours.start();
    await log.next('node', 'isLeader');

    await peer.request('selector.new', { name: 's', path, participantId: 'java' });
    await peer.request('selector.start', { name: 's' });
    await eventually('Curator to queue', async () => (await childrenOf(client, path)).length === 2);
    for (const child of await client.getChildren(path)) expect(child).toMatch(new RegExp(`^${PROTECTED}lock-\\d{10}$`));
    expect(await oneLeader('selector', 's', ours)).toBe('node');
    expect((await peer.request<{ ids: string[] }>('selector.participants', { name: 's' })).ids).toEqual(['node', 'java']);

    const mark = peer.mark();
    task.release();
    await peer.waitForEvent({ event: 'takeLeadership', name: 's' }, { since: mark });
    expect(await oneLeader('selector', 's', ours)).toBe('java');
    // Ours requeued itself behind Curator.
    await eventually('ours to queue behind Curator', async () => (await ours.getParticipants()).map((p) => p.id).join() === 'java,node');

    const events = log.mark();
    await peer.request('selector.release', { name: 's' });
    await log.next('node', 'isLeader', events);
    expect(await oneLeader('selector', 's', ours)).toBe('node');
    await peer.request('selector.close', { name: 's' });
  });
});
