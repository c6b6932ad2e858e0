import { NodeCache, PathChildrenCache, type ChildData } from '../../../recipes/cache';
import type { ZkClient } from '../../../src';
import { expireSession } from '../../../src/testing';
import { StateRecorder, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';

/** Collects events and hands them out one by one, waiting for the next with a bound. */
class Events<T> {
  private readonly queue: T[] = [];
  private waiter: ((value: T) => void) | undefined;

  readonly push = (value: T): void => {
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter) waiter(value);
    else this.queue.push(value);
  };

  next(what: string, timeoutMs = timing(10_000)): Promise<T> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${timeoutMs} ms`)), timeoutMs);
      this.waiter = (value) => {
        clearTimeout(timer);
        resolve(value);
      };
    });
  }

  get pending(): number {
    return this.queue.length;
  }
}

describe('NodeCache and PathChildrenCache, the bridges over CuratorCache', () => {
  const closers: Array<{ close(): Promise<void> }> = [];
  let root: string;

  const zk = useZooKeeper({ beforeClose: () => Promise.all(closers.splice(0).map((c) => c.close())) });
  beforeEach(() => {
    root = `${randomRoot('bridge')}/test`;
  });

  const connect = () => zk.clients.connect({ connectString: zk.server.connectString });
  const nodeCache = async (client: ZkClient, path: string) => {
    const cache = new NodeCache(client, path);
    closers.push(cache);
    const events = new Events<string>();
    cache.on('nodeChanged', (node) => events.push(node?.data?.toString() ?? 'gone'));
    cache.start();
    await cache.waitForInitialized({ timeoutMs: timing(10_000) });
    return { cache, events };
  };

  // Curator's TestNodeCache#testBasics (and TestCuratorCacheWrappers#testNodeCache).
  it('NodeCache: a node that comes, changes and goes', async () => {
    const client = await connect();
    await client.create(root, { createParents: 'persistent' });
    const { cache, events } = await nodeCache(client, `${root}/node`);
    expect(cache.getCurrentData()).toBeUndefined();
    await client.create(`${root}/node`, { data: 'a' });
    expect(await events.next('a created node')).toBe('a');
    expect(cache.getCurrentData()?.data?.toString()).toBe('a');
    await client.setData(`${root}/node`, 'b');
    expect(await events.next('a change')).toBe('b');
    await client.delete(`${root}/node`);
    expect(await events.next('a deletion')).toBe('gone');
    expect(cache.getCurrentData()).toBeUndefined();
  });

  // Curator's TestNodeCache#testDeleteThenCreate.
  it('NodeCache: deleted, then created again', async () => {
    const client = await connect();
    await client.create(`${root}/foo`, { data: 'one', createParents: 'persistent' });
    const { cache, events } = await nodeCache(client, `${root}/foo`);
    expect(await events.next('the first load')).toBe('one');
    expect(cache.getCurrentData()?.data?.toString()).toBe('one');
    await client.delete(`${root}/foo`);
    expect(await events.next('a deletion')).toBe('gone');
    await client.create(`${root}/foo`, { data: 'two' });
    expect(await events.next('a creation')).toBe('two');
  });

  // Curator's TestNodeCache#testKilledSession.
  it('NodeCache: after its session expires, it keeps the node and hears of the next change', async () => {
    const client = await connect();
    const states = new StateRecorder(client);
    await client.create(`${root}/node`, { data: 'start', createParents: 'persistent' });
    const { cache, events } = await nodeCache(client, `${root}/node`);
    expect(await events.next('the first load')).toBe('start');
    const mark = states.mark();
    await expireSession(client);
    await states.waitFor('RECONNECTED', mark);
    expect(cache.getCurrentData()?.data?.toString()).toBe('start');
    const other = await connect();
    await other.setData(`${root}/node`, 'new data');
    expect(await events.next('the change')).toBe('new data');
    expect(events.pending).toBe(0);
  });

  // Curator's TestPathChildrenCache#testBasics (and TestCuratorCacheWrappers#testPathChildrenCache).
  it('PathChildrenCache: children added, updated and removed; the parent itself is not reported', async () => {
    const client = await connect();
    await client.create(root, { createParents: 'persistent' });
    const cache = new PathChildrenCache(client, root);
    closers.push(cache);
    const events = new Events<string>();
    cache.on('childAdded', (c) => events.push(`added ${c.path} ${c.data?.toString()}`));
    cache.on('childUpdated', (c) => events.push(`updated ${c.path} ${c.data?.toString()}`));
    cache.on('childRemoved', (c) => events.push(`removed ${c.path}`));
    let initial: ChildData[] | undefined;
    cache.on('initialized', (children) => (initial = children));
    cache.start();
    await cache.waitForInitialized({ timeoutMs: timing(10_000) });
    expect(initial).toEqual([]);
    await client.create(`${root}/one`, { data: 'hey there' });
    expect(await events.next('CHILD_ADDED')).toBe(`added ${root}/one hey there`);
    await client.setData(`${root}/one`, 'sup!');
    expect(await events.next('CHILD_UPDATED')).toBe(`updated ${root}/one sup!`);
    expect(cache.getCurrentData(`${root}/one`)?.data?.toString()).toBe('sup!');
    await client.create(`${root}/one/grandchild`);
    await client.delete(`${root}/one/grandchild`);
    await client.setData(root, 'parent changed');
    await client.delete(`${root}/one`);
    expect(await events.next('CHILD_REMOVED')).toBe(`removed ${root}/one`);
    expect(events.pending).toBe(0);
    expect(cache.getCurrentData()).toEqual([]);
  });

  // Curator's TestPathChildrenCache#testChildrenInitialized, #testUpdateWhenNotCachingData, #testParentContainerMissing.
  it('PathChildrenCache: the initial children, sorted; without data when asked; a parent created later', async () => {
    const client = await connect();
    for (const name of ['c', 'a', 'b']) await client.create(`${root}/${name}`, { data: name, createParents: 'persistent' });
    const cache = new PathChildrenCache(client, root, { cacheData: false });
    closers.push(cache);
    const initial = new Promise<ChildData[]>((resolve) => cache.on('initialized', resolve));
    cache.start();
    expect((await initial).map((c) => [c.path, c.data])).toEqual([
      [`${root}/a`, undefined],
      [`${root}/b`, undefined],
      [`${root}/c`, undefined],
    ]);
    const updated = new Promise<ChildData>((resolve) => cache.on('childUpdated', resolve));
    await client.setData(`${root}/a`, 'something new');
    expect((await updated).stat.version).toBe(1);

    const later = new PathChildrenCache(client, `${root}/missing`);
    closers.push(later);
    const added = new Promise<ChildData>((resolve) => later.on('childAdded', resolve));
    later.start();
    await later.waitForInitialized({ timeoutMs: timing(10_000) });
    await client.create(`${root}/missing/child`, { data: 'x', createParents: 'persistent' });
    expect((await added).path).toBe(`${root}/missing/child`);
  });

  // Curator's TestPathChildrenCache#testKilledSession.
  it('PathChildrenCache: after its session expires, only the differences are reported', async () => {
    const client = await connect();
    const other = await connect();
    const states = new StateRecorder(client);
    for (const name of ['keep', 'change', 'remove']) await client.create(`${root}/${name}`, { data: name, createParents: 'persistent' });
    const cache = new PathChildrenCache(client, root);
    closers.push(cache);
    cache.start();
    await cache.waitForInitialized({ timeoutMs: timing(10_000) });
    const events = new Events<string>();
    cache.on('childAdded', (c) => events.push(`added ${c.path}`));
    cache.on('childUpdated', (c) => events.push(`updated ${c.path}`));
    cache.on('childRemoved', (c) => events.push(`removed ${c.path}`));
    // The session expires while another client changes the children: the watches fire in a
    // session that is gone, and the new session must find the differences.
    const mark = states.mark();
    await expireSession(client);
    await other.setData(`${root}/change`, 'changed');
    await other.delete(`${root}/remove`);
    await other.create(`${root}/new`);
    await states.waitFor('RECONNECTED', mark);
    const seen = [await events.next('a difference'), await events.next('a difference'), await events.next('a difference')].sort();
    expect(seen).toEqual([`added ${root}/new`, `removed ${root}/remove`, `updated ${root}/change`]);
    expect(cache.getCurrentData().map((c) => c.path)).toEqual([`${root}/change`, `${root}/keep`, `${root}/new`]);
    expect(events.pending).toBe(0);
  });
});
