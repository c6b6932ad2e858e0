/**
 * An already-aborted signal, given to any timed or abortable call of the atomic values, the
 * barriers, the nodes and the caches, rejects with the signal's reason before any I/O: nothing is
 * created, and nothing is left running.
 */
import { DistributedAtomicInteger, DistributedAtomicLong, DistributedAtomicValue } from '../../recipes/atomic';
import { DistributedBarrier, DistributedDoubleBarrier } from '../../recipes/barriers';
import { CuratorCache, NodeCache, PathChildrenCache } from '../../recipes/cache';
import { GroupMember, PersistentNode, PersistentTtlNode } from '../../recipes/nodes';
import type { ZkClient } from '../../src';
import { randomRoot, timing } from '../helpers';
import { useZooKeeper } from '../fixture';

describe('already-aborted signals, across the atomic values, barriers, nodes and caches', () => {
  const zk = useZooKeeper({ closeClients: 'file' });
  let client: ZkClient;
  const root = randomRoot('aborted');

  beforeAll(async () => {
    client = await zk.clients.connect({ connectString: zk.server.connectString });
  });

  const reason = new Error('aborted before the call');
  const signal = AbortSignal.abort(reason);

  it('every call rejects with the reason, and nothing is created', async () => {
    const started = {
      node: new PersistentNode(client, `${root}/node`),
      ttl: new PersistentTtlNode(client, `${root}/ttl`, { ttlMs: 10_000 }),
      cache: new CuratorCache(client, `${root}/cache`),
      nodeCache: new NodeCache(client, `${root}/nc`),
      children: new PathChildrenCache(client, `${root}/pc`),
      group: new GroupMember(client, `${root}/group`, 'me'),
    };
    // The caches are started (they create nothing): their waits are what is called.
    started.cache.start();
    started.nodeCache.start();
    started.children.start();
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['DistributedAtomicLong.increment', () => new DistributedAtomicLong(client, `${root}/long`).increment({ signal })],
      ['DistributedAtomicLong.get', () => new DistributedAtomicLong(client, `${root}/long`).get({ signal })],
      ['DistributedAtomicLong.forceSet', () => new DistributedAtomicLong(client, `${root}/long`).forceSet(1n, { signal })],
      ['DistributedAtomicInteger.initialize', () => new DistributedAtomicInteger(client, `${root}/int`).initialize(1, { signal })],
      ['DistributedAtomicValue.trySet', () => new DistributedAtomicValue(client, `${root}/value`).trySet('x', { signal })],
      ['DistributedAtomicValue.compareAndSet', () => new DistributedAtomicValue(client, `${root}/value`).compareAndSet('a', 'b', { signal })],
      ['DistributedBarrier.setBarrier', () => new DistributedBarrier(client, `${root}/barrier`).setBarrier({ signal })],
      ['DistributedBarrier.removeBarrier', () => new DistributedBarrier(client, `${root}/barrier`).removeBarrier({ signal })],
      ['DistributedBarrier.waitOnBarrier', () => new DistributedBarrier(client, `${root}/barrier`).waitOnBarrier({ signal })],
      ['DistributedDoubleBarrier.enter', () => new DistributedDoubleBarrier(client, `${root}/double`, 2).enter({ signal })],
      ['PersistentNode.waitForInitialCreate', () => started.node.waitForInitialCreate({ signal })],
      ['PersistentNode.setData', () => started.node.setData('x', { signal })],
      ['PersistentTtlNode.setData', () => started.ttl.setData('x', { signal })],
      ['CuratorCache.waitForInitialized', () => started.cache.waitForInitialized({ signal })],
      ['CuratorCache.events', () => started.cache.events({ signal }).next()],
      ['NodeCache.waitForInitialized', () => started.nodeCache.waitForInitialized({ signal })],
      ['PathChildrenCache.waitForInitialized', () => started.children.waitForInitialized({ signal })],
      ['GroupMember.setThisData', () => started.group.setThisData('x', { signal })],
    ];
    for (const [name, call] of calls) {
      await expect(call().then(() => `${name} resolved`, (err: unknown) => (err === reason ? 'rejected with the reason' : `${name}: ${String(err)}`))).resolves.toBe('rejected with the reason');
    }
    await Promise.all(Object.values(started).map((r) => r.close()));
    expect(await client.exists(root)).toBeNull();
  }, timing(60_000));
});
