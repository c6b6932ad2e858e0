import { once } from 'node:events';
import type { ZkClient } from '../../../src';
import { InvalidArgumentError } from '../../../src';
import { SharedCount, decodeCount, encodeCount } from '../../../recipes/shared';
import { AtomicValueCorruptError } from '../../../recipes/atomic';
import { eventually, nextEvent, randomRoot } from '../../helpers';
import { useZooKeeper } from '../../fixture';

describe('SharedCount', () => {
  let path: string;
  const counts: SharedCount[] = [];

  const zk = useZooKeeper({
    beforeClose: async () => {
        for (const c of counts.splice(0)) c.close();
      },
  });
  beforeEach(() => {
    path = `${randomRoot('count')}/limit`;
  });

  const connect = () => zk.clients.connect({ connectString: zk.server.connectString });
  const started = async (client: ZkClient, seed: number) => {
    const count = new SharedCount(client, path, seed);
    counts.push(count);
    await count.start();
    return count;
  };

  it('stores a 4-byte big-endian int; start() seeds a missing node and keeps an existing one', async () => {
    expect(encodeCount(258)).toEqual(Buffer.from([0, 0, 1, 2]));
    expect(decodeCount(Buffer.from([0xff, 0xff, 0xff, 0xfe]))).toBe(-2);
    expect(() => decodeCount(Buffer.from([1, 2]))).toThrow(AtomicValueCorruptError);
    expect(() => decodeCount(Buffer.alloc(0))).toThrow(AtomicValueCorruptError);
    expect(() => new SharedCount({} as ZkClient, '/x', 2 ** 31)).toThrow(InvalidArgumentError);

    const a = await connect();
    const first = await started(a, 5);
    expect(first.getVersionedValue()).toEqual({ count: 5, version: 0 });
    expect((await a.getData(path)).data).toEqual(Buffer.from([0, 0, 0, 5]));
    const second = await started(a, 9);
    expect(second.getCount()).toBe(5);
  });

  it("tells 'changed' listeners of other sessions' updates, and trySetCount checks the version", async () => {
    const a = await connect();
    const b = await connect();
    const writer = await started(a, 1);
    const reader = await started(b, 1);

    const seen = nextEvent<number>((done) => reader.on('changed', (count) => done(count)), 'a changed event');
    await writer.setCount(3);
    expect(await seen).toBe(3);
    expect(reader.getVersionedValue()).toEqual({ count: 3, version: 1 });

    // The watch is set again after each fire.
    const again = nextEvent<number>((done) => reader.on('changed', (count) => count === 4 && done(count)), 'a second changed event');
    expect(await writer.trySetCount(4, 1)).toBe(true);
    expect(await again).toBe(4);

    // A stale version fails and refreshes what the writer sees.
    expect(await reader.trySetCount(7, 1)).toBe(false);
    expect(reader.getVersionedValue()).toEqual({ count: 4, version: 2 });
    expect(await reader.trySetCount(7, 2)).toBe(true);
    expect(reader.getCount()).toBe(7);
  });

  it('follows the node through a delete and a re-create: the new count is seen, and trySetCount works on the new node', async () => {
    const a = await connect();
    const b = await connect();
    const count = await started(a, 1);
    await count.setCount(5);
    expect(count.getVersionedValue()).toEqual({ count: 5, version: 1 });

    const recreated = nextEvent<number>((done) => count.on('changed', (c) => c === 42 && done(c)), 'the count of the new node');
    await b.delete(path);
    await b.create(path, { data: encodeCount(42) });
    expect(await recreated).toBe(42);
    // The new node's version starts again at 0; an update against it succeeds.
    expect(count.getVersionedValue()).toEqual({ count: 42, version: 0 });
    expect(await count.trySetCount(43, 0)).toBe(true);
    expect((await b.getData(path)).data).toEqual(encodeCount(43));
  });

  it('is an EventEmitter, and refuses a client that is not one', async () => {
    const a = await connect();
    const count = await started(a, 1);
    const changed = once(count, 'changed');
    await count.setCount(2);
    expect(await changed).toEqual([2, 1]);
    expect(() => new SharedCount(null as unknown as ZkClient, path, 1)).toThrow(InvalidArgumentError);
  });

  it('start() rejects a node that holds no count, as the atomics do, and leaves it as it was', async () => {
    const a = await connect();
    for (const data of [Buffer.from('foo'), Buffer.alloc(0)]) {
      await a.create(path, { data, createParents: 'persistent' });
      const count = new SharedCount(a, path, 5);
      counts.push(count);
      await expect(count.start()).rejects.toMatchObject({ name: 'AtomicValueCorruptError', code: 'BAD_DATA', path });
      expect((await a.getData(path)).data).toEqual(data);
      await a.delete(path);
    }
  });

  it('a node corrupted after start() is not read as a stale count: getCount and trySetCount reject until setCount repairs it', async () => {
    const a = await connect();
    const b = await connect();
    const count = await started(a, 5);
    await b.setData(path, Buffer.from([1, 2, 3]));
    await eventually('the corrupt node to be seen', () => {
      try {
        count.getCount();
        return false;
      } catch (err) {
        return err instanceof AtomicValueCorruptError;
      }
    });
    expect(() => count.getVersionedValue()).toThrow(AtomicValueCorruptError);
    // A write at the version read before the corruption fails, and what it reads then is no count.
    await expect(count.trySetCount(6, 0)).rejects.toThrow(AtomicValueCorruptError);
    expect((await b.getData(path)).data).toEqual(Buffer.from([1, 2, 3]));
    await count.setCount(7);
    expect(count.getVersionedValue()).toEqual({ count: 7, version: 2 });
    expect((await b.getData(path)).data).toEqual(encodeCount(7));
  });
});
