import { CuratorCache } from '../../../recipes/cache';
import type { ZkClient } from '../../../src';
import { FaultProxy, TestingCluster, TestingServer } from '../../../src/testing';
import { StateRecorder, eventually, isWatching, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { EventMirror, cacheMatches, treeOf } from './cacheTesting';

describe('CuratorCache under faults', () => {
  const caches: CuratorCache[] = [];
  let root: string;

  const zk = useZooKeeper({ beforeClose: () => Promise.all(caches.splice(0).map((c) => c.close())) });
  beforeEach(() => {
    root = `${randomRoot('cache-faults')}/root`;
  });

  /** Curator's testReconnectConsistency tree. */
  const buildTree = async (client: ZkClient) => {
    await client.create(root, { data: 'one', createParents: 'persistent' });
    for (const p of ['/1', '/2', '/1/11', '/1/12', '/1/13', '/2/21', '/2/22']) await client.create(`${root}${p}`, { data: 'one' });
  };
  /** The changes of that test, made while the cache cannot hear. */
  const changeTree = async (client: ZkClient) => {
    await client.delete(`${root}/2`, { recursive: true });
    await client.setData(root, 'two');
    for (const p of ['/1/11/111', '/1/11/111/1111', '/1/11/111/1112', '/1/13/131', '/1/13/132', '/1/13/132/1321']) await client.create(`${root}${p}`, { data: 'two' });
  };
  const started = async (client: ZkClient) => {
    const cache = new CuratorCache(client, root);
    caches.push(cache);
    const mirror = new EventMirror().attach(cache);
    cache.start();
    await cache.waitForInitialized({ timeoutMs: timing(10_000) });
    return { cache, mirror };
  };
  const differencesSince = (mirror: EventMirror, before: EventMirror['counts']) => ({
    created: mirror.counts.created - before.created,
    changed: mirror.counts.changed - before.changed,
    deleted: mirror.counts.deleted - before.deleted,
  });

  // Curator's testReconnectConsistency, as a partition within the session.
  it('a partition within the session: changes made meanwhile are all heard after the heal, and only they', async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const client = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 10_000 });
    const other = await zk.clients.connect({ connectString: zk.server.connectString });
    const states = new StateRecorder(client);
    await buildTree(other);
    const { cache, mirror } = await started(client);
    const before = { ...mirror.counts };
    const mark = states.mark();
    proxy.blackhole();
    await changeTree(other);
    proxy.heal();
    await states.waitFor('RECONNECTED', mark);
    const tree = await treeOf(other, root);
    expect(tree.size).toBe(11);
    await cacheMatches(cache, tree);
    expect(mirror.errors).toEqual([]);
    expect(differencesSince(mirror, before)).toEqual({ created: 6, changed: 1, deleted: 3 });
    expect(states.since(mark)).not.toContain('LOST');
  });

  it('a partition longer than the session: in the new session the tree is read again, and only the differences are reported', async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const client = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 4_000 });
    const other = await zk.clients.connect({ connectString: zk.server.connectString });
    const states = new StateRecorder(client);
    await buildTree(other);
    const { cache, mirror } = await started(client);
    const before = { ...mirror.counts };
    const mark = states.mark();
    proxy.blackhole();
    await changeTree(other);
    await states.waitFor('LOST', mark);
    proxy.heal();
    await states.waitFor('RECONNECTED', mark);
    await cacheMatches(cache, await treeOf(other, root));
    expect(mirror.errors).toEqual([]);
    expect(differencesSince(mirror, before)).toEqual({ created: 6, changed: 1, deleted: 3 });
  });

  it('the root deleted and created again while the cache cannot hear: the old subtree goes, the new one comes', async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const client = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 10_000 });
    const other = await zk.clients.connect({ connectString: zk.server.connectString });
    const states = new StateRecorder(client);
    await buildTree(other);
    const { cache, mirror } = await started(client);
    const mark = states.mark();
    proxy.blackhole();
    await other.delete(root, { recursive: true });
    await other.create(`${root}/new`, { data: 'fresh', createParents: 'persistent' });
    proxy.heal();
    await states.waitFor('RECONNECTED', mark);
    await cacheMatches(cache, await treeOf(other, root));
    expect(mirror.errors).toEqual([]);
  });

  // Curator's testServerLoss.
  it('the server the client talks to dies in a 3-server ensemble: the cache keeps the tree and hears what comes after', async () => {
    await using cluster = await TestingCluster.start(3, { forceSync: false });
    const client = await zk.clients.connect({ connectString: cluster.connectString });
    const states = new StateRecorder(client);
    await client.create(root, { createParents: 'persistent' });
    const { cache } = await started(client);
    for (const name of ['one', 'two', 'three']) await client.create(`${root}/${name}`);
    await cacheMatches(cache, await treeOf(client, root));
    let connectedTo: TestingServer | undefined;
    await eventually('the member the client talks to', async () => {
      for (const member of cluster.members) if (await isWatching(member, root, client.sessionId)) connectedTo = member;
      return connectedTo;
    });
    const mark = states.mark();
    await connectedTo?.kill();
    await states.waitFor('RECONNECTED', mark);
    expect(cache.size).toBe(4);
    await client.create(`${root}/four`, { data: 'after' });
    await cacheMatches(cache, await treeOf(client, root));
  });
});
