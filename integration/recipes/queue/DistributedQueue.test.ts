import {
  DistributedDelayQueue,
  DistributedIdQueue,
  DistributedPriorityQueue,
  DistributedQueue,
  QueueSerializationError,
  curatorItemSerializer,
  jsonSerializer,
  utf8Serializer,
  type QueueItemContext,
} from '../../../recipes/queue';
import { InvalidArgumentError, MAX_DATA_BYTES, type ZkClient } from '../../../src';
import { TestingServer } from '../../../src/testing';
import { Clients, eventually, randomRoot, timing, watchNode } from '../../helpers';
import { Collector, Gate, childrenOf } from './queueTesting';

/** Curator's ItemSerializer framing of one JSON item. */
function framedJson(value: unknown): Buffer {
  const bytes = Buffer.from(JSON.stringify(value), 'utf8');
  const len = Buffer.alloc(4);
  len.writeInt32BE(bytes.length);
  return Buffer.concat([Buffer.from([0, 1, 0, 1, 1]), len, bytes, Buffer.from([2])]);
}

const SEQUENTIAL = /^queue-\d{10}$/;

describe('DistributedQueue family on a real server', () => {
  let server: TestingServer;
  const shared = new Clients();
  const clients = new Clients();
  let zk: ZkClient;
  let root: string;
  const open: Array<{ close(): Promise<void> }> = [];

  /** A queue closed after the test. */
  function track<Q extends { close(): Promise<void> }>(queue: Q): Q {
    open.push(queue);
    return queue;
  }

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    zk = await shared.connect({ connectString: server.connectString });
  });
  beforeEach(() => {
    root = randomRoot('queue');
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((q) => q.close()));
    await clients.closeAll();
  });
  afterAll(async () => {
    await shared.closeAll();
    await server?.close();
  });

  it('put writes queue-NNNNNNNNNN nodes in Curator format; start() consumes them in order and deletes them', async () => {
    const path = `${root}/q`;
    const producer = new DistributedQueue<{ n: number }>(zk, path);
    for (let n = 0; n < 5; n++) await producer.put({ n });
    const names = await childrenOf(zk, path);
    expect(names).toHaveLength(5);
    for (const name of names) expect(name).toMatch(SEQUENTIAL);
    expect((await zk.getData(`${path}/${names[0]}`)).data).toEqual(framedJson({ n: 0 }));

    const consumerClient = await clients.connect({ connectString: server.connectString });
    const got = new Collector<number>();
    const contexts: QueueItemContext[] = [];
    track(new DistributedQueue<{ n: number }>(consumerClient, path)).start((item, context) => {
      contexts.push(context);
      got.add(item.n);
    });
    expect(await got.waitForCount(5)).toEqual([0, 1, 2, 3, 4]);
    expect(contexts.map((c) => c.node)).toEqual(names);
    expect(contexts[0]).toMatchObject({ index: 0, count: 1 });
    for (let n = 5; n < 8; n++) await producer.put({ n });
    expect(await got.waitForCount(8)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await eventually('consumed items to be deleted', async () => (await childrenOf(zk, path)).length === 0);
  });

  it('consume(): an item is deleted when the loop comes back for the next; abort ends the loop with its reason', async () => {
    const path = `${root}/q`;
    const lockPath = `${root}/locks`;
    const queue = track(new DistributedQueue<string>(zk, path, { lockPath }));
    await queue.put('a');
    await queue.put('b');
    await queue.put('c');
    const [first, second, third] = await childrenOf(zk, path);
    const ac = new AbortController();
    const seen: string[] = [];
    const loop = (async () => {
      for await (const item of queue.consume({ signal: ac.signal })) {
        seen.push(item);
        if (item === 'a') {
          // In hand: still queued, and locked by us.
          expect(await childrenOf(zk, path)).toEqual([first, second, third]);
          expect(await childrenOf(zk, lockPath)).toEqual([first]);
        } else {
          // 'a' was finished before 'b' was claimed (maxItems 1).
          expect((await watchNode(zk, `${path}/${first}`)).existed).toBe(false);
          ac.abort(new Error('enough'));
        }
      }
    })();
    await expect(loop).rejects.toThrow('enough');
    expect(seen).toEqual(['a', 'b']);
    // The body for 'b' ran to its end, so 'b' counts as handled; 'c' was never claimed.
    expect(await childrenOf(zk, path)).toEqual([third]);
    expect(await childrenOf(zk, lockPath)).toEqual([]);
  });

  it('consume(): leaving the loop with break gives a lock-safe item back, and the next consumer gets it', async () => {
    const path = `${root}/q`;
    const queue = track(new DistributedQueue<string>(zk, path, { lockPath: `${root}/locks` }));
    await queue.put('only');
    for await (const item of queue.consume()) {
      expect(item).toBe('only');
      break;
    }
    expect(await childrenOf(zk, path)).toHaveLength(1);
    const again: string[] = [];
    for await (const item of queue.consume()) {
      again.push(item);
      break;
    }
    expect(again).toEqual(['only']);
  });

  it('consume() with maxItems 3 claims ahead; leaving the loop gives every unfinished item back', async () => {
    const path = `${root}/q`;
    const lockPath = `${root}/locks`;
    const queue = track(new DistributedQueue<number>(zk, path, { lockPath, maxItems: 3 }));
    for (let n = 0; n < 3; n++) await queue.put(n);
    for await (const n of queue.consume()) {
      expect(n).toBe(0);
      await eventually('all three to be claimed', async () => (await childrenOf(zk, lockPath)).length === 3);
      break;
    }
    expect(await childrenOf(zk, path)).toHaveLength(3);
    expect(await childrenOf(zk, lockPath)).toEqual([]);
  });

  it('close() ends a consume() loop that waits for items', async () => {
    const queue = new DistributedQueue<number>(zk, `${root}/q`);
    const seen: number[] = [];
    const loop = (async () => {
      for await (const n of queue.consume()) seen.push(n);
    })();
    await queue.put(1);
    await eventually('the item to be consumed', () => seen.length === 1);
    await queue.close();
    await loop;
    expect(seen).toEqual([1]);
    expect(() => queue.consume()).toThrow(/closed/);
  });

  it('putMulti writes all items into one node; a consumer handles them in order', async () => {
    const path = `${root}/q`;
    const queue = track(new DistributedQueue<string>(zk, path, { serializer: curatorItemSerializer(utf8Serializer) }));
    expect(await queue.size()).toBe(0);
    const node = await queue.putMulti(['x', 'y', 'z']);
    expect(node).toMatch(new RegExp(`^${path}/queue-\\d{10}$`));
    expect(await childrenOf(zk, path)).toHaveLength(1);
    // A putMulti node counts once.
    expect(await queue.size()).toBe(1);
    const got = new Collector<string>();
    const indexes: number[] = [];
    queue.start((item, { index, count }) => {
      got.add(item);
      indexes.push(index * 10 + count);
    });
    expect(await got.waitForCount(3)).toEqual(['x', 'y', 'z']);
    expect(indexes).toEqual([3, 13, 23]);
    await expect(queue.putMulti([])).rejects.toBeInstanceOf(InvalidArgumentError);
    const plain = new DistributedQueue<string>(zk, path, { serializer: utf8Serializer });
    await expect(plain.putMulti(['a', 'b'])).rejects.toBeInstanceOf(QueueSerializationError);
  });

  it('lock-safe: EPHEMERAL <lockPath>/<item> while the handler runs; the item goes only after it resolves, then the lock', async () => {
    const path = `${root}/q`;
    const lockPath = `${root}/locks`;
    await new DistributedQueue<string>(zk, path).put('job');
    const [name] = await childrenOf(zk, path);
    const consumerClient = await clients.connect({ connectString: server.connectString });
    const gate = new Gate();
    const started = new Gate<string>();
    track(new DistributedQueue<string>(consumerClient, path, { lockPath })).start(async (item) => {
      started.open(item);
      await gate.promise;
    });
    expect(await started.promise).toBe('job');
    const lock = await zk.exists(`${lockPath}/${name}`);
    expect(lock?.ephemeralOwner).toBe(consumerClient.sessionId);
    expect(await childrenOf(zk, path)).toEqual([name]);

    const itemGone = await watchNode(zk, `${path}/${name}`);
    const lockGone = await watchNode(zk, `${lockPath}/${name}`);
    const order: string[] = [];
    const both = Promise.all([itemGone.next.then(() => order.push('item')), lockGone.next.then(() => order.push('lock'))]);
    gate.open();
    await both;
    expect(order).toEqual(['item', 'lock']);
  });

  it("errorMode 'requeue': a failed item comes back as a new queue- node, not a longer name (CURATOR-56), and is handled again", async () => {
    const path = `${root}/q`;
    const queue = track(new DistributedQueue<string>(zk, path, { lockPath: `${root}/locks`, onError: (err) => errors.push(err) }));
    const errors: unknown[] = [];
    await queue.put('flaky');
    await queue.put('next');
    const [original] = await childrenOf(zk, path);
    const got = new Collector<string>();
    const nodes: string[] = [];
    let failures = 0;
    queue.start((item, { node }) => {
      nodes.push(node);
      if (item === 'flaky' && failures++ === 0) throw new Error('first try fails');
      got.add(item);
    });
    expect(await got.waitForCount(2)).toEqual(['next', 'flaky']);
    expect(nodes[0]).toBe(original);
    const requeued = nodes[2];
    expect(requeued).toMatch(SEQUENTIAL);
    expect(Number(requeued.slice(-10))).toBeGreaterThan(Number(original.slice(-10)));
    expect(errors).toEqual([expect.objectContaining({ message: 'first try fails' })]);
    await eventually('the queue to empty', async () => (await childrenOf(zk, path)).length === 0);
  });

  it("errorMode 'delete': a failed item is dropped", async () => {
    const path = `${root}/q`;
    const queue = track(new DistributedQueue<string>(zk, path, { lockPath: `${root}/locks`, errorMode: 'delete', onError: () => undefined }));
    await queue.put('bad');
    await queue.put('good');
    const got = new Collector<string>();
    queue.start((item) => {
      got.add(item);
      if (item === 'bad') throw new Error('nope');
    });
    await got.waitForCount(2);
    await eventually('the queue to empty', async () => (await childrenOf(zk, path)).length === 0);
    expect(got.items).toEqual(['bad', 'good']);
  });

  it('without lockPath: at most once, the item is deleted before the handler runs; errorMode needs lockPath', async () => {
    const path = `${root}/q`;
    expect(() => new DistributedQueue(zk, path, { errorMode: 'delete' })).toThrow(InvalidArgumentError);
    const queue = track(new DistributedQueue<string>(zk, path, { onError: () => undefined }));
    await queue.put('once');
    const [name] = await childrenOf(zk, path);
    const seen = new Gate<boolean>();
    queue.start(async () => {
      seen.open((await zk.exists(`${path}/${name}`)) !== null);
      throw new Error('lost, as at most once allows');
    });
    expect(await seen.promise).toBe(false);
    expect(await childrenOf(zk, path)).toEqual([]);
  });

  it('maxItems bounds the nodes a consumer has in hand', async () => {
    const path = `${root}/q`;
    const lockPath = `${root}/locks`;
    const queue = track(new DistributedQueue<number>(zk, path, { lockPath, maxItems: 2 }));
    for (let n = 0; n < 4; n++) await queue.put(n);
    const gates = new Map<number, Gate>();
    const started = new Collector<number>();
    queue.start(async (n) => {
      const gate = new Gate();
      gates.set(n, gate);
      started.add(n);
      await gate.promise;
    });
    expect(await started.waitForCount(2)).toEqual([0, 1]);
    expect(await childrenOf(zk, lockPath)).toHaveLength(2);
    gates.get(1)?.open();
    expect(await started.waitForCount(3)).toEqual([0, 1, 2]);
    // One slot freed, one taken: still two in hand, and 3 waits.
    expect(started.items).toHaveLength(3);
    expect(await childrenOf(zk, lockPath)).toHaveLength(2);
    gates.get(0)?.open();
    gates.get(2)?.open();
    expect(await started.waitForCount(4)).toEqual([0, 1, 2, 3]);
    gates.get(3)?.open();
  });

  it('lock-safe consumers read each item once in all (the lock holder), and no consumer reads a node twice', async () => {
    const path = `${root}/q`;
    const lockPath = `${root}/locks`;
    const [a, b] = await Promise.all([clients.connect({ connectString: server.connectString }), clients.connect({ connectString: server.connectString })]);
    const reads = new Map<ZkClient, string[]>([
      [a, []],
      [b, []],
    ]);
    for (const c of [a, b]) {
      const original = c.getData.bind(c);
      // Successful reads only: a consumer that locks an item another one just finished gets NONODE.
      jest.spyOn(c, 'getData').mockImplementation(async (p, o) => {
        const result = await original(p, o);
        if (p.startsWith(`${path}/`)) reads.get(c)?.push(p);
        return result;
      });
    }
    const got = new Collector<number>();
    track(new DistributedQueue<number>(a, path, { lockPath })).start((n) => got.add(n));
    track(new DistributedQueue<number>(b, path, { lockPath })).start((n) => got.add(n));
    const producer = new DistributedQueue<number>(zk, path);
    for (let n = 0; n < 30; n++) await producer.put(n);
    await got.waitForCount(30);
    expect([...got.items].sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    const all = [...reads.values()].flat();
    expect(new Set(all).size).toBe(30);
    expect(all).toHaveLength(30);
    expect(got.items).toHaveLength(30);
  });

  it('bad input gets a typed error and enqueues nothing: BigInt, circular objects, over 1 MiB', async () => {
    const path = `${root}/q`;
    const queue = new DistributedQueue<unknown>(zk, path);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(queue.put(10n)).rejects.toBeInstanceOf(QueueSerializationError);
    await expect(queue.put({ nested: [1n] })).rejects.toThrow(/BigInt/);
    await expect(queue.put(circular)).rejects.toThrow(/circular/);
    await expect(queue.putMulti(['fine', circular])).rejects.toBeInstanceOf(QueueSerializationError);
    const big = 'x'.repeat(MAX_DATA_BYTES);
    const err = await queue.put(big).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toMatch(/more than the limit of 1047552 bytes/);
    expect(await zk.exists(path)).toBeNull();
    await queue.put('ok');
    expect(await childrenOf(zk, path)).toHaveLength(1);
  });

  it('close() waits for the item in hand, then the queue refuses puts and handlers', async () => {
    const path = `${root}/q`;
    const queue = new DistributedQueue<string>(zk, path, { lockPath: `${root}/locks` });
    await queue.put('slow');
    const gate = new Gate();
    const started = new Gate();
    queue.start(async () => {
      started.open();
      await gate.promise;
    });
    expect(() => queue.start(() => undefined)).toThrow(/already has a handler/);
    await started.promise;
    let closed = false;
    const closing = queue.close().then(() => (closed = true));
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    gate.open();
    await closing;
    expect(await childrenOf(zk, path)).toEqual([]);
    await expect(queue.put('late')).rejects.toThrow(/closed/);
  });

  it('DistributedPriorityQueue: Curator names; lower priorities first, FIFO within one', async () => {
    const path = `${root}/pq`;
    const queue = track(new DistributedPriorityQueue<string>(zk, path, { lockPath: `${root}/locks` }));
    const puts: Array<[string, number]> = [
      ['ten', 10],
      ['minus-three', -3],
      ['zero-a', 0],
      ['minus-big', -200_000],
      ['zero-b', 0],
    ];
    for (const [item, priority] of puts) await queue.put(item, priority);
    const names = await childrenOf(zk, path);
    expect(names.map((n) => n.slice(0, -10))).toEqual(
      expect.arrayContaining(['queue-10000000A', 'queue-0FFFFFFFD', 'queue-100000000', 'queue-0FFFCF2C0']),
    );
    const got = new Collector<string>();
    queue.start((item) => got.add(item));
    expect(await got.waitForCount(5)).toEqual(['minus-big', 'minus-three', 'zero-a', 'zero-b', 'ten']);
    await expect(queue.put('x', 1.5)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('DistributedDelayQueue: each item at or after its time, in time order; a timer, not polling, wakes the consumer', async () => {
    const path = `${root}/dq`;
    const queue = track(new DistributedDelayQueue<string>(zk, path));
    const now = Date.now();
    const due = { late: now + timing(900), soon: now + timing(400), past: now - 1_000 };
    await queue.put('late', due.late);
    await queue.put('soon', due.soon);
    await queue.put('past', due.past);
    const names = await childrenOf(zk, path);
    expect(names).toContainEqual(expect.stringMatching(new RegExp(`^queue-\\|${due.late.toString(16).toUpperCase()}\\|\\d{10}$`)));
    const got = new Collector<{ item: string; at: number }>();
    const consumerClient = await clients.connect({ connectString: server.connectString });
    const listings = jest.spyOn(consumerClient, 'getChildren');
    track(new DistributedDelayQueue<string>(consumerClient, path)).start((item) => got.add({ item, at: Date.now() }));
    const all = await got.waitForCount(3);
    expect(all.map((g) => g.item)).toEqual(['past', 'soon', 'late']);
    for (const g of all) expect(g.at).toBeGreaterThanOrEqual(due[g.item as keyof typeof due]);
    // The consumer listed once per change of the children (one per item deleted, at most), never on a clock.
    expect(listings.mock.calls.length).toBeLessThanOrEqual(4);
  });

  it('DistributedIdQueue: queue-|<id>| names with / and | replaced; remove(id) deletes the items with that id', async () => {
    const path = `${root}/iq`;
    const queue = track(new DistributedIdQueue<string>(zk, path, { lockPath: `${root}/locks` }));
    await queue.put('one', 'orders/1');
    await queue.put('two', 'orders|2');
    await queue.put('one-again', 'orders/1');
    await queue.put('three', 'orders_3');
    const names = await childrenOf(zk, path);
    expect(names.map((n) => n.slice(0, -10)).sort()).toEqual(['queue-|orders_1|', 'queue-|orders_1|', 'queue-|orders_2|', 'queue-|orders_3|']);
    expect(await queue.remove('orders/1')).toBe(2);
    expect(await queue.remove('orders/1')).toBe(0);
    await expect(queue.put('x', '')).rejects.toBeInstanceOf(InvalidArgumentError);
    const got = new Collector<string>();
    queue.start((item) => got.add(item));
    expect(await got.waitForCount(2)).toEqual(['two', 'three']);
  });

  it('a JSON serializer without framing stores the item as its own bytes', async () => {
    const path = `${root}/q`;
    const queue = track(new DistributedQueue<{ a: number }>(zk, path, { serializer: jsonSerializer() }));
    await queue.put({ a: 1 });
    const [name] = await childrenOf(zk, path);
    expect((await zk.getData(`${path}/${name}`)).data.toString()).toBe('{"a":1}');
    const got = new Collector<{ a: number }>();
    queue.start((item) => got.add(item));
    expect(await got.waitForCount(1)).toEqual([{ a: 1 }]);
  });
});
