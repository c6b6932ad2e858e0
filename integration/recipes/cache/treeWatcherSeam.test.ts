/**
 * The seam the persistent recursive watch plugs into: a tree watcher that reports paths without
 * data, and asks for rebuilds. Driven here by hand against a real server, it proves the cache's
 * own reads: a reported path is read, a deletion drops the node, a rebuild reads the whole tree
 * and reports only the differences.
 */
import { CuratorCache, type CacheScope, type TreeWatcher, type TreeWatcherSink } from '../../../recipes/cache';
import type { ZkClient } from '../../../src';
import { randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { EventMirror, cacheMatches, treeOf } from './cacheTesting';

/** A tree watcher whose reports the test makes. */
class ManualTreeWatcher implements TreeWatcher {
  static last: ManualTreeWatcher | undefined;
  constructor(readonly sink: TreeWatcherSink) {
    ManualTreeWatcher.last = this;
  }

  start(): void {
    // As a persistent watch would: read the whole tree once the watch is set.
    void this.sink.rebuild().then(() => this.sink.initialized());
  }

  async close(): Promise<void> {}
}

describe('the tree watcher seam', () => {
  const zk = useZooKeeper();
  let root: string;

  beforeEach(() => {
    root = `${randomRoot('seam')}/tree`;
  });

  const started = async (client: ZkClient, options: { filter?: (p: string) => 'data' | 'stat' | 'exclude'; maxDepth?: number } = {}) => {
    const cache = new CuratorCache(client, root, { ...options, treeWatcher: (_c: ZkClient, _s: CacheScope, sink: TreeWatcherSink) => new ManualTreeWatcher(sink) });
    const mirror = new EventMirror().attach(cache);
    cache.start();
    await cache.waitForInitialized({ timeoutMs: timing(10_000) });
    return { cache, mirror, watcher: ManualTreeWatcher.last as ManualTreeWatcher };
  };

  it('reads the tree at start, reads each reported path, and drops a deleted one', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    await client.create(`${root}/a/b`, { data: 'b', createParents: 'persistent' });
    const { cache, mirror, watcher } = await started(client);
    expect(cache.size).toBe(3);
    await client.setData(`${root}/a/b`, 'b2');
    await client.create(`${root}/c`, { data: 'c' });
    watcher.sink.changed(`${root}/a/b`);
    watcher.sink.changed(`${root}/c`);
    await cacheMatches(cache, await treeOf(client, root));
    await client.delete(`${root}/c`);
    watcher.sink.deleted(`${root}/c`);
    expect(cache.get(`${root}/c`)).toBeUndefined();
    // A path reported as changed that is gone by the time it is read is dropped too.
    await client.delete(`${root}/a/b`);
    watcher.sink.changed(`${root}/a/b`);
    await cacheMatches(cache, await treeOf(client, root));
    expect(mirror.errors).toEqual([]);
    await cache.close();
  });

  it('a rebuild after missed events reports only the differences', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    for (const p of ['/1/11', '/1/12', '/1/13', '/2/21', '/2/22']) await client.create(`${root}${p}`, { data: 'one', createParents: 'persistent' });
    const { cache, mirror, watcher } = await started(client);
    const before = { ...mirror.counts };
    // Changes the watch never reported (Curator's testReconnectConsistency).
    await client.delete(`${root}/2`, { recursive: true });
    await client.setData(root, 'two');
    await client.create(`${root}/1/11/111/1111`, { data: 'two', createParents: 'persistent' });
    await client.create(`${root}/1/13/131`, { data: 'two' });
    await watcher.sink.rebuild();
    await cacheMatches(cache, await treeOf(client, root), timing(1_000));
    expect(mirror.errors).toEqual([]);
    expect({ created: mirror.counts.created - before.created, changed: mirror.counts.changed - before.changed, deleted: mirror.counts.deleted - before.deleted }).toEqual({
      // 111 (its data is the client's default), 1111 and 131 are new; the root changed; 2, 21, 22 are gone.
      created: 3,
      changed: 1,
      deleted: 3,
    });
    await cache.close();
  });

  it('the filter and the depth apply to what a persistent watch would report from the whole subtree', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    await client.create(`${root}/skip/x`, { createParents: 'persistent' });
    await client.create(`${root}/keep/deep/deeper`, { createParents: 'persistent' });
    const { cache, watcher } = await started(client, { filter: (p) => (p.includes('/skip') ? 'exclude' : 'stat'), maxDepth: 2 });
    expect([...cache.nodes()].map((n) => n.path).sort()).toEqual([root, `${root}/keep`, `${root}/keep/deep`]);
    for (const p of ['/skip/x', '/keep/deep/deeper', '/skip']) watcher.sink.changed(`${root}${p}`);
    // Reads answer in order: once the change of /keep is in, the reports before it were handled.
    await client.setData(`${root}/keep`, 'x');
    const changed = new Promise((resolve) => cache.once('changed', resolve));
    watcher.sink.changed(`${root}/keep`);
    expect(await changed).toMatchObject({ path: `${root}/keep`, data: undefined, stat: { version: 1 } });
    expect([...cache.nodes()].map((n) => n.path).sort()).toEqual([root, `${root}/keep`, `${root}/keep/deep`]);
    await cache.close();
  });
});
