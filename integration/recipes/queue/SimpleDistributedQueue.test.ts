import { NoSuchElementError, QueueTimeoutError, SimpleDistributedQueue } from '../../../recipes/queue';
import { InvalidArgumentError, MAX_DATA_BYTES, type ZkClient } from '../../../src';
import { TestingServer } from '../../../src/testing';
import { Clients, eventually, randomRoot, timing, watchNode } from '../../helpers';
import { childrenOf } from './queueTesting';

describe('SimpleDistributedQueue on a real server', () => {
  let server: TestingServer;
  const clients = new Clients();
  let zk: ZkClient;
  let path: string;

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    zk = await clients.connect({ connectString: server.connectString });
  });
  beforeEach(() => {
    path = `${randomRoot('squeue')}/q`;
  });
  afterAll(async () => {
    await clients.closeAll();
    await server?.close();
  });

  it('offer writes qn-NNNNNNNNNN under a container; take, poll and remove return items in order', async () => {
    const queue = new SimpleDistributedQueue(zk, path);
    expect(await queue.offer('one')).toBe(true);
    await queue.offer(Buffer.from('two'));
    await queue.offer(new Uint8Array([0x74, 0x68, 0x72, 0x65, 0x65]));
    const names = await childrenOf(zk, path);
    expect(names).toHaveLength(3);
    for (const name of names) expect(name).toMatch(/^qn-\d{10}$/);
    expect((await zk.exists(path))?.ephemeralOwner).toBe(0n);
    expect((await queue.peek())?.toString()).toBe('one');
    expect((await queue.element()).toString()).toBe('one');
    expect((await queue.take()).toString()).toBe('one');
    expect((await queue.poll())?.toString()).toBe('two');
    expect((await queue.remove()).toString()).toBe('three');
  });

  it('on an empty or missing queue: poll and peek give undefined, element and remove throw NoSuchElementError', async () => {
    const queue = new SimpleDistributedQueue(zk, path);
    expect(await queue.poll()).toBeUndefined();
    expect(await queue.peek()).toBeUndefined();
    await expect(queue.element()).rejects.toBeInstanceOf(NoSuchElementError);
    await expect(queue.remove()).rejects.toMatchObject({ name: 'NoSuchElementError', code: 'NO_SUCH_ELEMENT' });
    await zk.create(path, { createParents: 'persistent' });
    await zk.create(`${path}/foreign`);
    expect(await queue.poll()).toBeUndefined();
    await expect(queue.offer({} as unknown as string)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(queue.offer(Buffer.alloc(MAX_DATA_BYTES + 1))).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await childrenOf(zk, path)).toEqual(['foreign']);
  });

  it('take waits for an offer; with timeoutMs it gives up with QueueTimeoutError; an abort rejects with its reason', async () => {
    const queue = new SimpleDistributedQueue(zk, path);
    const started = Date.now();
    await expect(queue.take({ timeoutMs: 200 })).rejects.toBeInstanceOf(QueueTimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(Date.now() - started).toBeLessThan(200 + timing(750));
    const ac = new AbortController();
    const aborted = queue.take({ signal: ac.signal });
    ac.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');

    const waiting = queue.take({ timeoutMs: timing(20_000) });
    const other = await clients.connect({ connectString: server.connectString });
    await new SimpleDistributedQueue(other, path).offer('late');
    expect((await waiting)?.toString()).toBe('late');
    expect(await queue.size()).toBe(0);
    await queue.offer('one');
    await queue.offer('two');
    expect(await queue.size()).toBe(2);
  });

  it('does not hang when the container is reaped while take() waits (CURATOR-308)', async () => {
    const taker = await clients.connect({ connectString: server.connectString });
    const existsCalls = jest.spyOn(taker, 'exists');
    const queue = new SimpleDistributedQueue(taker, path);
    await queue.offer('first');
    expect((await queue.take()).toString()).toBe('first');

    // The container is now empty, and the server reaps it soon (every 100 ms here).
    const waiting = queue.take({ timeoutMs: timing(30_000) });
    const reaped = await watchNode(zk, path);
    if (reaped.existed) expect(await reaped.next).toBe('deleted');
    // The take's children watch fired on the deletion; it then found the path missing and set
    // an exists watch on it instead.
    await eventually('take() to watch the missing path', () => existsCalls.mock.calls.some(([p]) => p === path));
    expect(await zk.exists(path)).toBeNull();

    await new SimpleDistributedQueue(zk, path).offer('second');
    expect((await waiting)?.toString()).toBe('second');
  });

  it('concurrent takers share the items: each once', async () => {
    const [a, b, c] = await Promise.all([0, 1, 2].map(() => clients.connect({ connectString: server.connectString })));
    const takers = [a, b, c].map((client) => new SimpleDistributedQueue(client, path));
    const producer = new SimpleDistributedQueue(zk, path);
    const taken: string[] = [];
    const loops = takers.map(async (q) => {
      for (;;) {
        const item = await q.take({ timeoutMs: timing(3_000) });
        if (item.toString() === 'end') return;
        taken.push(item.toString());
      }
    });
    for (let i = 0; i < 30; i++) await producer.offer(`item-${i}`);
    for (let i = 0; i < 3; i++) await producer.offer('end');
    await Promise.all(loops);
    expect(taken.sort()).toEqual(Array.from({ length: 30 }, (_, i) => `item-${i}`).sort());
  });
});
