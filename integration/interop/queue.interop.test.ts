import {
  DistributedDelayQueue,
  DistributedIdQueue,
  DistributedPriorityQueue,
  DistributedQueue,
  SimpleDistributedQueue,
  curatorItemSerializer,
  utf8Serializer,
} from '../../recipes/queue';
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

  it("priority queue: items Curator puts are consumed by ours in priority order, and the reverse", async () => {
    const path = `${root}/pq`;
    await peer.request('queue.new', { name: 'pq', path, kind: 'priority', consume: false });
    await peer.request('queue.start', { name: 'pq' });
    for (const [value, priority] of [['low', 10], ['high', -5], ['mid', 0]] as const) await peer.request('queue.put', { name: 'pq', value, priority });
    const got = new Collector<string>();
    const ours = new DistributedPriorityQueue<string>(zk, path, { serializer: curatorStrings });
    open.push(ours);
    ours.start((item) => got.add(item));
    expect(await got.waitForCount(3)).toEqual(['high', 'mid', 'low']);
    await peer.request('queue.close', { name: 'pq' });
    await ours.close();

    // Ours puts, with every item there before Curator's consumer starts.
    const path2 = `${root}/pq2`;
    const producer = new DistributedPriorityQueue<string>(zk, path2, { serializer: curatorStrings });
    for (const [value, priority] of [['c', 3], ['a', -1], ['b', 2]] as const) await producer.put(value, priority);
    await peer.request('queue.new', { name: 'pq2', path: path2, kind: 'priority' });
    await peer.request('queue.start', { name: 'pq2' });
    expect(await peerItems('pq2', 3)).toEqual(['a', 'b', 'c']);
    await peer.request('queue.close', { name: 'pq2' });
  });

  it('id queue: each side removes the other\'s items by id, and consumes the rest', async () => {
    const path = `${root}/idq`;
    await peer.request('queue.new', { name: 'idq', path, kind: 'id', consume: false });
    await peer.request('queue.start', { name: 'idq' });
    for (const [value, id] of [['a', 'x'], ['b', 'y'], ['c', 'x']] as const) await peer.request('queue.put', { name: 'idq', value, itemId: id });
    const ours = new DistributedIdQueue<string>(zk, path, { serializer: curatorStrings });
    open.push(ours);
    expect(await ours.remove('x')).toBe(2);
    const got = new Collector<string>();
    ours.start((item) => got.add(item));
    expect(await got.waitForCount(1)).toEqual(['b']);
    await peer.request('queue.close', { name: 'idq' });
    await ours.close();

    const path2 = `${root}/idq2`;
    const producer = new DistributedIdQueue<string>(zk, path2, { serializer: curatorStrings });
    for (const [value, id] of [['d', 'p'], ['e', 'q'], ['f', 'p']] as const) await producer.put(value, id);
    // Curator's queue must be started to remove; one without a consumer removes, another consumes.
    await peer.request('queue.new', { name: 'idq2', path: path2, kind: 'id', consume: false });
    await peer.request('queue.start', { name: 'idq2' });
    expect(await peer.request('queue.remove', { name: 'idq2', itemId: 'q' })).toMatchObject({ removed: 1 });
    await peer.request('queue.close', { name: 'idq2' });
    await peer.request('queue.new', { name: 'idq2c', path: path2, kind: 'id' });
    await peer.request('queue.start', { name: 'idq2c' });
    expect(await peerItems('idq2c', 2)).toEqual(['d', 'f']);
    await peer.request('queue.close', { name: 'idq2c' });
  });

  it("delay queue: an item is consumed, by either side, only once its time has come", async () => {
    const path = `${root}/dq`;
    await peer.request('queue.new', { name: 'dq', path, kind: 'delay', consume: false });
    await peer.request('queue.start', { name: 'dq' });
    const due = Date.now() + timing(1_500);
    await peer.request('queue.put', { name: 'dq', value: 'later', delayUntilEpochMs: due });
    await peer.request('queue.put', { name: 'dq', value: 'now', delayUntilEpochMs: Date.now() });
    const got = new Collector<string>();
    const at: number[] = [];
    const ours = new DistributedDelayQueue<string>(zk, path, { serializer: curatorStrings });
    open.push(ours);
    ours.start((item) => {
      at.push(Date.now());
      got.add(item);
    });
    expect(await got.waitForCount(2)).toEqual(['now', 'later']);
    expect(at[1]).toBeGreaterThanOrEqual(due);
    await peer.request('queue.close', { name: 'dq' });
    await ours.close();

    const path2 = `${root}/dq2`;
    await peer.request('queue.new', { name: 'dq2', path: path2, kind: 'delay' });
    await peer.request('queue.start', { name: 'dq2' });
    const producer = new DistributedDelayQueue<string>(zk, path2, { serializer: curatorStrings });
    const mark = peer.mark();
    const due2 = Date.now() + timing(1_500);
    await producer.put('later', due2);
    await producer.put('now', Date.now());
    expect(await peerItems('dq2', 2)).toEqual(['now', 'later']);
    const consumed = peer.eventLog.slice(mark).filter((e) => e.event === 'item' && e.name === 'dq2');
    expect(consumed.map((e) => e.value)).toEqual(['now', 'later']);
    expect(Number(consumed[1].atEpochMs)).toBeGreaterThanOrEqual(due2);
    await peer.request('queue.close', { name: 'dq2' });
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
