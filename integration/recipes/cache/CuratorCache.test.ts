import { CacheTimeoutError, CuratorCache, type CuratorCacheEvent } from '../../../recipes/cache';
import { IllegalStateError, InvalidArgumentError, ZkClient } from '../../../src';
import { TestingServer } from '../../../src/testing';
import { TEST_TRANSPORT, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { EventMirror, cacheMatches, contentsOf, treeOf } from './cacheTesting';

describe('CuratorCache', () => {
  const caches: CuratorCache[] = [];
  let root: string;

  const zk = useZooKeeper({ beforeClose: () => Promise.all(caches.splice(0).map((c) => c.close())) });
  beforeEach(() => {
    root = `${randomRoot('cache')}/test`;
  });

  const connect = () => zk.clients.connect({ connectString: zk.server.connectString });
  const cacheOf = (client: ZkClient, path = root, options: ConstructorParameters<typeof CuratorCache>[2] = {}) => {
    const cache = new CuratorCache(client, path, options);
    caches.push(cache);
    return cache;
  };

  // Curator's testAfterInitialized.
  it('loads a tree, then tells of initialized; every node is held with its data', async () => {
    const client = await connect();
    for (const p of ['', '/one', '/one/two', '/one/two/three', '/other']) await client.create(`${root}${p}`, { data: `d${p}`, createParents: 'persistent' });
    const cache = cacheOf(client);
    const mirror = new EventMirror().attach(cache);
    cache.start();
    await cache.waitForInitialized({ timeoutMs: timing(10_000) });
    expect(cache.isInitialized).toBe(true);
    expect(cache.size).toBe(5);
    expect(contentsOf(cache)).toEqual(await treeOf(client, root));
    expect(cache.get(`${root}/one/two/three`)?.data?.toString()).toBe('d/one/two/three');
    expect(cache.children(root).map((n) => n.path)).toEqual([`${root}/one`, `${root}/other`]);
    expect(mirror.counts).toEqual({ created: 5, changed: 0, deleted: 0, initialized: 1 });
    expect(mirror.errors).toEqual([]);
  });

  /** The paths the server holds watches on for `sessionId` (wchc: a session, then one tab-indented path per line). */
  async function watchedPaths(sessionId: bigint): Promise<string[]> {
    const lines = (await zk.server.fourLetterWord('wchc')).split('\n');
    const at = lines.indexOf(`0x${sessionId.toString(16)}`);
    if (at < 0) return [];
    const paths: string[] = [];
    for (const line of lines.slice(at + 1)) {
      if (!line.startsWith('\t')) break;
      paths.push(line.trim());
    }
    return [...new Set(paths)].sort();
  }

  it('watches with one persistent recursive watch on the protocol transport, with watches on every node on the native one', async () => {
    const client = await connect();
    const paths = ['', '/a', '/a/b', '/c'].map((p) => `${root}${p}`);
    for (const p of paths) await client.create(p, { createParents: 'persistent' });
    const cache = cacheOf(client);
    cache.start();
    await cache.waitForInitialized({ timeoutMs: timing(10_000) });
    // The client's own watch on the ensemble's configuration (see `ensembleTracker`) is not the cache's.
    const watched = (await watchedPaths(client.sessionId)).filter((p) => p !== '/zookeeper/config');
    expect(await watchedPaths(client.sessionId)).toContain('/zookeeper/config');
    if (TEST_TRANSPORT === 'protocol') expect(watched).toEqual([root]);
    else expect(watched).toEqual([...paths].sort());
    // Either way, a change deep in the tree is heard.
    await client.setData(`${root}/a/b`, 'new');
    await cacheMatches(cache, await treeOf(client, root));
  });

  // Curator's testListenerBuilder: the root comes, changes and goes.
  it('tells of a node created, changed and deleted, the root included, and of nothing else', async () => {
    const client = await connect();
    const cache = cacheOf(client);
    const events: string[] = [];
    cache.on('created', (n) => events.push(`created ${n.path} ${n.data?.toString()}`));
    cache.on('changed', (n, p) => events.push(`changed ${n.path} ${p.data?.toString()}->${n.data?.toString()}`));
    cache.on('deleted', (p) => events.push(`deleted ${p.path}`));
    cache.start();
    await cache.waitForInitialized({ timeoutMs: timing(10_000) });
    expect(cache.size).toBe(0);
    await client.create(root, { data: 'a', createParents: 'persistent' });
    await cacheMatches(cache, new Map([[root, 'a']]));
    await client.setData(root, 'new');
    await cacheMatches(cache, new Map([[root, 'new']]));
    await client.create(`${root}/child`, { data: 'c' });
    await cacheMatches(cache, new Map([[root, 'new'], [`${root}/child`, 'c']]));
    await client.delete(root, { recursive: true });
    await cacheMatches(cache, new Map());
    expect(events).toEqual([`created ${root} a`, `changed ${root} a->new`, `created ${root}/child c`, `deleted ${root}/child`, `deleted ${root}`]);
  });

  // Curator's testUpdateWhenNotCachingData, with the filter in place of the storage.
  it("the filter keeps a node's stat without its data, or leaves a subtree out", async () => {
    const client = await connect();
    await client.create(`${root}/keep/deep`, { data: 'x', createParents: 'persistent' });
    await client.create(`${root}/skip/deep`, { data: 'x', createParents: 'persistent' });
    await client.create(`${root}/stat`, { data: 'x' });
    const cache = cacheOf(client, root, { filter: (p) => (p.startsWith(`${root}/skip`) ? 'exclude' : p.endsWith('/stat') ? 'stat' : 'data') });
    const changes: string[] = [];
    cache.on('changed', (n) => changes.push(n.path));
    cache.start();
    await cache.waitForInitialized({ timeoutMs: timing(10_000) });
    expect([...cache.nodes()].map((n) => n.path).sort()).toEqual([root, `${root}/keep`, `${root}/keep/deep`, `${root}/stat`]);
    expect(cache.get(`${root}/stat`)?.data).toBeUndefined();
    expect(cache.get(`${root}/stat`)?.stat.version).toBe(0);
    await client.setData(`${root}/stat`, 'something new');
    await client.create(`${root}/skip/deep/deeper`);
    await client.setData(`${root}/keep/deep`, 'y');
    await cacheMatches(cache, new Map([[root, ''], [`${root}/keep`, ''], [`${root}/keep/deep`, 'y'], [`${root}/stat`, '']]));
    expect(cache.get(`${root}/stat`)?.stat.version).toBe(1);
    expect(changes).toEqual([`${root}/stat`, `${root}/keep/deep`]);
  });

  it('maxDepth bounds how deep the cache goes: 0 is the root alone', async () => {
    const client = await connect();
    await client.create(`${root}/a/b/c`, { createParents: 'persistent' });
    const single = cacheOf(client, root, { maxDepth: 0 });
    const two = cacheOf(client, root, { maxDepth: 2 });
    single.start();
    two.start();
    await Promise.all([single.waitForInitialized(), two.waitForInitialized()]);
    expect([...single.nodes()].map((n) => n.path)).toEqual([root]);
    expect([...two.nodes()].map((n) => n.path).sort()).toEqual([root, `${root}/a`, `${root}/a/b`]);
  });

  // Curator's testClearOnClose.
  it('is emptied on close, unless clearOnClose is false', async () => {
    const client = await connect();
    await client.create(`${root}/bar`, { data: 'bar', createParents: 'persistent' });
    const kept = cacheOf(client, root, { clearOnClose: false });
    const cleared = cacheOf(client);
    kept.start();
    cleared.start();
    await Promise.all([kept.waitForInitialized(), cleared.waitForInitialized()]);
    await Promise.all([kept.close(), cleared.close()]);
    expect(kept.size).toBe(2);
    expect(cleared.size).toBe(0);
    await expect(kept.waitForInitialized()).rejects.toThrow(IllegalStateError);
  });

  it('events(): the nodes held first, then changes; a busy consumer gets one event per path', async () => {
    const client = await connect();
    await client.create(`${root}/a`, { data: '1', createParents: 'persistent' });
    const cache = cacheOf(client);
    cache.start();
    await cache.waitForInitialized();
    const iterator = cache.events();
    const seen: CuratorCacheEvent[] = [];
    for (let i = 0; i < 3; i++) seen.push((await iterator.next()).value as CuratorCacheEvent);
    expect(seen.map((e) => e.type)).toEqual(['created', 'created', 'initialized']);
    // The consumer is busy while /a changes three times, /b comes and goes, and /c comes.
    for (const data of ['2', '3', '4']) await client.setData(`${root}/a`, data);
    await client.create(`${root}/b`);
    await client.delete(`${root}/b`);
    await client.create(`${root}/c`, { data: 'c' });
    await cacheMatches(cache, new Map([[root, ''], [`${root}/a`, '4'], [`${root}/c`, 'c']]));
    const next = [(await iterator.next()).value, (await iterator.next()).value] as CuratorCacheEvent[];
    expect(next).toMatchObject([
      { type: 'changed', node: { path: `${root}/a` }, previous: { path: `${root}/a` } },
      { type: 'created', node: { path: `${root}/c` } },
    ]);
    expect((next[0] as { node: { data: Buffer } }).node.data.toString()).toBe('4');
    expect((next[0] as { previous: { data: Buffer } }).previous.data.toString()).toBe('1');
    const ac = new AbortController();
    const pending = (async () => {
      for await (const event of cache.events({ signal: ac.signal })) void event;
    })();
    ac.abort(new Error('enough'));
    await expect(pending).rejects.toThrow('enough');
    await cache.close();
    expect((await iterator.next()).done).toBe(true);
  });

  it('waitForInitialized rejects with CacheTimeoutError in time; misuse and bad input are refused', async () => {
    const unstarted = new ZkClient({ connectString: zk.server.connectString });
    expect(() => new CuratorCache(unstarted, 'x')).toThrow(InvalidArgumentError);
    expect(() => new CuratorCache(unstarted, root, { maxDepth: -1 })).toThrow(InvalidArgumentError);
    expect(() => new CuratorCache(unstarted, root, { filter: 'x' as never })).toThrow(InvalidArgumentError);
    const idle = new CuratorCache(unstarted, root);
    expect(() => idle.start()).toThrow(IllegalStateError);
    await expect(idle.waitForInitialized()).rejects.toThrow(IllegalStateError);
    await expect(idle.waitForInitialized({ timeoutMs: -5 })).rejects.toThrow(InvalidArgumentError);
    expect(() => idle.events({ signal: 5 as never })).toThrow(InvalidArgumentError);
    await unstarted.close();

    const stopped = await TestingServer.start({ forceSync: false });
    const client = await zk.clients.connect({ connectString: stopped.connectString });
    await stopped.stop();
    const cache = cacheOf(client);
    cache.start();
    const startedAt = Date.now();
    await expect(cache.waitForInitialized({ timeoutMs: 300 })).rejects.toThrow(CacheTimeoutError);
    expect(Date.now() - startedAt).toBeLessThan(timing(1_500));
    await cache.close();
    await client.close();
    await stopped.close();
  });
});
