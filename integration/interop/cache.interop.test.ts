import { CuratorCache, NodeCache, PathChildrenCache } from '../../recipes/cache';
import { GroupMember } from '../../recipes/nodes';
import type { ZkClient } from '../../src';
import { TestingServer } from '../../src/testing';
import { Clients, eventually, randomRoot, timing } from '../helpers';
import { cacheMatches, contentsOf, treeOf } from '../recipes/cache/cacheTesting';
import { CuratorPeer } from './CuratorPeer';

describe("CuratorCache and GroupMember with Curator's on the same paths", () => {
  let server: TestingServer;
  let peer: CuratorPeer;
  const clients = new Clients();
  const closers: Array<{ close(): Promise<void> }> = [];
  let client: ZkClient;
  let root: string;

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    peer = await CuratorPeer.start(server.connectString, { label: 'curator-cache' });
  });
  beforeEach(async () => {
    root = randomRoot('interop-cache');
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

  const javaSnapshot = async (name: string) => {
    const { paths, datas } = await peer.request<{ paths: string[]; datas: string[] }>('cache.snapshot', { name });
    return new Map(paths.map((p, i) => [p, datas[i]]));
  };

  it("both sides change one tree; Curator's CuratorCache and ours end with the same nodes as the tree", async () => {
    const path = `${root}/tree`;
    await client.create(`${path}/a`, { data: 'a', createParents: 'persistent' });
    await peer.request('cache.new', { name: 'c', path });
    const mark = peer.mark();
    await peer.request('cache.start', { name: 'c' });
    await peer.waitForEvent({ event: 'cacheInitialized', name: 'c' }, { since: mark });
    const ours = new CuratorCache(client, path);
    closers.push(ours);
    ours.start();
    await ours.waitForInitialized({ timeoutMs: timing(10_000) });

    for (let i = 0; i < 20; i++) {
      if (i % 2 === 0) await peer.request('zk.create', { path: `${path}/j${i}/x`, data: `java ${i}` });
      else await client.create(`${path}/n${i}`, { data: `node ${i}` });
    }
    await peer.request('zk.setData', { path: `${path}/a`, data: 'java wrote' });
    await client.delete(`${path}/j0`, { recursive: true });
    await peer.request('zk.delete', { path: `${path}/n1` });
    await client.setData(`${path}/j2/x`, 'node wrote');

    const tree = await treeOf(client, path);
    await cacheMatches(ours, tree);
    await eventually("Curator's cache to match", async () => JSON.stringify([...(await javaSnapshot('c'))].sort()) === JSON.stringify([...tree].sort()));
    expect([...contentsOf(ours)].sort()).toEqual([...(await javaSnapshot('c'))].sort());
    await peer.request('forget', { name: 'c' });
  });

  it('NodeCache and PathChildrenCache follow what Curator writes', async () => {
    const path = `${root}/children`;
    const node = new NodeCache(client, `${path}/config`);
    const children = new PathChildrenCache(client, path);
    closers.push(node, children);
    node.start();
    children.start();
    await Promise.all([node.waitForInitialized(), children.waitForInitialized()]);
    await peer.request('zk.create', { path: `${path}/config`, data: 'v1' });
    await peer.request('zk.create', { path: `${path}/worker-1`, data: 'w1' });
    await eventually('the caches to hear', () => node.getCurrentData()?.data?.toString() === 'v1' && children.getCurrentData().length === 2);
    await peer.request('zk.setData', { path: `${path}/config`, data: 'v2' });
    await peer.request('zk.delete', { path: `${path}/worker-1` });
    await eventually('the caches to hear again', () => node.getCurrentData()?.data?.toString() === 'v2' && children.getCurrentData().length === 1);
  });

  it("GroupMember: Curator's members and ours see one group", async () => {
    const path = `${root}/group`;
    await peer.request('group.new', { name: 'g', path, memberId: 'java', payload: 'from java' });
    await peer.request('group.start', { name: 'g' });
    const ours = new GroupMember(client, path, 'node', { payload: 'from node' });
    closers.push(ours);
    ours.start();
    await ours.waitForInitialized({ timeoutMs: timing(10_000) });
    const javaView = async () => {
      const { ids, payloads } = await peer.request<{ ids: string[]; payloads: string[] }>('group.members', { name: 'g' });
      return Object.fromEntries(ids.map((id, i) => [id, payloads[i]]));
    };
    const ourView = () => Object.fromEntries([...ours.getCurrentMembers()].map(([id, p]) => [id, p.toString()]));
    const both = { java: 'from java', node: 'from node' };
    await eventually('our view of both', () => JSON.stringify(ourView()) === JSON.stringify(both));
    await eventually("Curator's view of both", async () => JSON.stringify(await javaView()) === JSON.stringify(both));
    await ours.setThisData('changed');
    await eventually('Curator to see our payload', async () => (await javaView()).node === 'changed');
    await peer.request('group.setThisData', { name: 'g', payload: 'java changed' });
    await eventually("us to see Curator's payload", () => ourView().java === 'java changed');
    const removed = new Promise((resolve) => ours.once('memberRemoved', resolve));
    await peer.request('forget', { name: 'g' });
    expect(await removed).toBe('java');
    expect(ourView()).toEqual({ node: 'changed' });
  });
});
