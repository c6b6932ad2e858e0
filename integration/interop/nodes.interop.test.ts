import { PersistentNode, PersistentTtlNode } from '../../recipes/nodes';
import type { ZkClient } from '../../src';
import { TestingServer } from '../../src/testing';
import { Clients, eventually, protectedSequential, randomRoot, timing, watchNode } from '../helpers';
import { CuratorPeer } from './CuratorPeer';

describe("PersistentNode and PersistentTtlNode with Curator's on the same paths", () => {
  let server: TestingServer;
  let peer: CuratorPeer;
  const clients = new Clients();
  const closers: Array<{ close(): Promise<void> }> = [];
  let client: ZkClient;
  let root: string;

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    peer = await CuratorPeer.start(server.connectString, { label: 'curator-nodes' });
  });
  beforeEach(async () => {
    root = randomRoot('interop-nodes');
    client = await clients.connect({ connectString: server.connectString });
  });
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((c) => c.close()));
    await clients.closeAll();
  });
  afterAll(async () => {
    await peer?.close();
    await server?.close();
  });

  it('protected sequential nodes are named alike, and each side re-creates its node under its name after its session expires', async () => {
    const expiring = await CuratorPeer.start(server.connectString, { label: 'curator-expiring-node' });
    try {
      await expiring.request('persistentNode.new', { name: 'j', path: `${root}/java/member-`, mode: 'EPHEMERAL_SEQUENTIAL', protected: true, data: 'java' });
      await expiring.request('persistentNode.start', { name: 'j' });
      expect(await expiring.request('persistentNode.waitForInitialCreate', { name: 'j' })).toMatchObject({ created: true });
      const javaPath = (await expiring.request<{ path: string }>('persistentNode.path', { name: 'j' })).path;
      const ours = new PersistentNode(client, `${root}/node/member-`, { mode: 'EPHEMERAL_SEQUENTIAL', protected: true, data: 'node' });
      closers.push(ours);
      ours.start();
      await ours.waitForInitialCreate({ timeoutMs: timing(10_000) });
      expect(javaPath.slice(`${root}/java/`.length)).toMatch(protectedSequential('member-'));
      expect((ours.actualPath as string).slice(`${root}/node/`.length)).toMatch(protectedSequential('member-'));

      // Curator keeps its name through an expiry, as ours does.
      const deleted = await watchNode(client, javaPath);
      await expiring.expireSession();
      expect(await deleted.next).toBe('deleted');
      await eventually("Curator's node back", async () => (await client.exists(javaPath)) !== null);
      expect((await client.getData(javaPath)).data.toString()).toBe('java');
    } finally {
      await expiring.close();
    }
  });

  it("each takes over the other's node, and Curator's brings its node back when ours deletes it", async () => {
    const path = `${root}/shared`;
    await peer.request('persistentNode.new', { name: 'shared', path, mode: 'PERSISTENT', data: 'java' });
    await peer.request('persistentNode.start', { name: 'shared' });
    await peer.request('persistentNode.waitForInitialCreate', { name: 'shared' });
    const ours = new PersistentNode(client, path, { mode: 'PERSISTENT', data: 'node' });
    ours.start();
    await ours.waitForInitialCreate({ timeoutMs: timing(10_000) });
    expect((await client.getData(path)).data.toString()).toBe('node');
    const mark = peer.mark();
    await ours.close();
    await peer.waitForEvent({ event: 'nodeCreated', name: 'shared' }, { since: mark });
    expect((await client.getData(path)).data.toString()).toBe('java');
    await peer.request('forget', { name: 'shared' });
    expect(await client.exists(path)).toBeNull();
  });

  it("PersistentTtlNode: ours keeps Curator's node alive after Curator's stops touching it", async () => {
    const path = `${root}/ttl`;
    // A 2 s TTL, ours touched every 250 ms: a stalled test process or server JVM cannot let the
    // node expire in the 3 s it is watched, which is still longer than the TTL.
    await peer.request('ttlNode.new', { name: 't', path, ttlMs: 2_000, data: 'java' });
    await peer.request('ttlNode.start', { name: 't' });
    await peer.request('ttlNode.waitForInitialCreate', { name: 't' });
    await eventually("Curator's touch node", async () => (await client.exists(`${path}/touch`)) !== null);
    const ours = new PersistentTtlNode(client, path, { ttlMs: 2_000, touchScheduleFactor: 8, data: 'node' });
    closers.push(ours);
    ours.start();
    await ours.waitForInitialCreate({ timeoutMs: timing(10_000) });
    expect((await client.getData(path)).data.toString()).toBe('node');
    await peer.request('forget', { name: 't' });
    const stays = await watchNode(client, path, 3_000);
    await expect(stays.next).rejects.toThrow(/no an event on/);
    expect(await client.exists(`${path}/touch`)).not.toBeNull();
  });
});
