import { DistributedQueue, SimpleDistributedQueue, curatorItemSerializer, utf8Serializer } from '../../recipes/queue';
import type { ZkClient } from '../../src';
import { TestingServer } from '../../src/testing';
import { Collector, childrenOf } from '../recipes/queue/queueTesting';
import { Clients, eventually, randomRoot, timing } from '../helpers';
import { CuratorPeer } from './CuratorPeer';

/** The peer's queues hold strings through a QueueSerializer that writes UTF-8. */
const curatorStrings = curatorItemSerializer(utf8Serializer);

describe('queues interop with Curator 5.x', () => {
  let server: TestingServer;
  let peer: CuratorPeer;
  let zk: ZkClient;
  const clients = new Clients();
  const open: Array<{ close(): Promise<void> }> = [];
  let root: string;

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    peer = await CuratorPeer.start(server.connectString, { label: 'queue-peer' });
    zk = await clients.connect({ connectString: server.connectString });
  });
  beforeEach(() => {
    root = randomRoot('interop-queue');
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((q) => q.close()));
  });
  afterAll(async () => {
    await clients.closeAll();
    await peer?.close();
    await server?.close();
  });

  /** Waits for `count` item events of the peer's queue `name`, in the order they came. */
  async function peerItems(name: string, count: number): Promise<string[]> {
    const values: string[] = [];
    for (let i = 0; i < count; i++) values.push(String((await peer.waitForEvent({ event: 'item', name }, timing(20_000))).value));
    return values;
  }

  it.each([
    ['lock-safe', true],
    ['at most once', false],
  ])("items put by Curator's DistributedQueue are consumed by ours in order (%s)", async (_mode, lockSafe) => {
    const path = `${root}/q`;
    const lockPath = lockSafe ? `${root}/locks` : undefined;
    const name = `from-curator-${lockSafe}`;
    await peer.request('queue.new', { name, path, consume: false, lockPath });
    await peer.request('queue.start', { name });
    const values = ['a', 'héllo', '', 'x'.repeat(5_000)];
    for (const value of values) await peer.request('queue.put', { name, value });
    const got = new Collector<string>();
    const ours = new DistributedQueue<string>(zk, path, { serializer: curatorStrings, lockPath });
    open.push(ours);
    ours.start((item) => got.add(item));
    expect(await got.waitForCount(values.length)).toEqual(values);
    await peer.request('queue.put', { name, value: 'later' });
    expect(await got.waitForCount(values.length + 1)).toEqual([...values, 'later']);
    await eventually('the queue to empty', async () => (await childrenOf(zk, path)).length === 0);
    await peer.request('queue.close', { name });
  });

  it("items put by ours with Curator's serializer are consumed by Curator's consumer, in order", async () => {
    const path = `${root}/q`;
    const lockPath = `${root}/locks`;
    await peer.request('queue.new', { name: 'to-curator', path, lockPath });
    await peer.request('queue.start', { name: 'to-curator' });
    const ours = new DistributedQueue<string>(zk, path, { serializer: curatorStrings });
    const values = ['one', 'twö', 'three'];
    for (const value of values) await ours.put(value);
    expect(await peerItems('to-curator', 3)).toEqual(values);
    // putMulti: one node, which Curator unpacks item by item.
    await ours.putMulti(['m1', 'm2']);
    expect(await peerItems('to-curator', 2)).toEqual(['m1', 'm2']);
    await eventually('the queue to empty', async () => (await childrenOf(zk, path)).length === 0);
    await peer.request('queue.close', { name: 'to-curator' });
  });

  it('ours and Curator consume one lock-safe queue together: every item once', async () => {
    const path = `${root}/q`;
    const lockPath = `${root}/locks`;
    await peer.request('queue.new', { name: 'shared', path, lockPath });
    await peer.request('queue.start', { name: 'shared' });
    const consumerClient = await clients.connect({ connectString: server.connectString });
    const got = new Collector<string>();
    const ours = new DistributedQueue<string>(consumerClient, path, { serializer: curatorStrings, lockPath });
    open.push(ours);
    ours.start((item) => got.add(item));
    const producer = new DistributedQueue<string>(zk, path, { serializer: curatorStrings });
    const COUNT = 40;
    const mark = peer.mark();
    for (let i = 0; i < COUNT; i++) await producer.put(`item-${i}`);
    await eventually(
      'every item to be consumed',
      async () => (await childrenOf(zk, path)).length === 0 && got.items.length + peer.eventLog.slice(mark).filter((e) => e.event === 'item').length >= COUNT,
    );
    await eventually('the locks to go', async () => (await childrenOf(zk, lockPath)).length === 0);
    const byCurator = peer.eventLog
      .slice(mark)
      .filter((e) => e.event === 'item' && e.name === 'shared')
      .map((e) => String(e.value));
    const all = [...got.items, ...byCurator];
    expect(all).toHaveLength(COUNT);
    expect(new Set(all).size).toBe(COUNT);
    await peer.request('queue.close', { name: 'shared' });
  });

  it('SimpleDistributedQueue: Curator offers, ours takes; ours offers, Curator takes', async () => {
    const path = `${root}/squeue`;
    await peer.request('squeue.new', { name: 'sq', path });
    const ours = new SimpleDistributedQueue(zk, path);
    await peer.request('squeue.offer', { name: 'sq', value: 'from-curator' });
    expect((await ours.take({ timeoutMs: timing(10_000) }))?.toString('utf8')).toBe('from-curator');

    // Ours waits first; Curator's offer wakes it.
    const waiting = ours.take({ timeoutMs: timing(20_000) });
    await peer.request('squeue.offer', { name: 'sq', value: 'wakes ours' });
    expect((await waiting)?.toString('utf8')).toBe('wakes ours');

    await ours.offer('from-ours-1');
    await ours.offer('from-ours-2');
    expect(await childrenOf(zk, path)).toEqual([expect.stringMatching(/^qn-\d{10}$/), expect.stringMatching(/^qn-\d{10}$/)]);
    expect(await peer.request('squeue.take', { name: 'sq', timeoutMs: timing(10_000) })).toMatchObject({ value: 'from-ours-1' });
    expect(await peer.request('squeue.take', { name: 'sq', timeoutMs: timing(10_000) })).toMatchObject({ value: 'from-ours-2' });
    expect(await ours.poll()).toBeUndefined();
  });
});
