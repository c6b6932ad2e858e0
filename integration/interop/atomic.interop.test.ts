import { DistributedAtomicInteger, DistributedAtomicLong, DistributedAtomicValue } from '../../recipes/atomic';
import { RetryNTimes, type ZkClient } from '../../src';
import { TestingServer } from '../../src/testing';
import { Clients, randomRoot } from '../helpers';
import { CuratorPeer } from './CuratorPeer';

interface Outcome {
  succeeded: boolean;
  preValue: string | null;
  postValue: string | null;
}

describe("the atomic values with Curator's on the same node", () => {
  let server: TestingServer;
  let peer: CuratorPeer;
  const clients = new Clients();
  let client: ZkClient;
  let root: string;
  let n = 0;

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    peer = await CuratorPeer.start(server.connectString, { label: 'curator-atomic' });
  });
  beforeEach(async () => {
    root = randomRoot('interop-atomic');
    client = await clients.connect({ connectString: server.connectString });
  });
  afterEach(() => clients.closeAll());
  afterAll(async () => {
    await peer?.close();
    await server?.close();
  });

  const javaAtomic = async (kind: 'long' | 'int' | 'value', path: string, extra: Record<string, string | number> = {}) => {
    const name = `atomic-${++n}`;
    await peer.request('atomic.new', { name, kind, path, ...extra });
    return name;
  };

  it('DistributedAtomicLong: both sides count on one node, promoted to one lock, and no increment is lost', async () => {
    const path = `${root}/counter`;
    const lockPath = `${root}/lock`;
    const java = await javaAtomic('long', path, { retries: 3, sleepMs: 3, lockPath, lockRetries: 3 });
    const ours = new DistributedAtomicLong(client, path, { retryPolicy: new RetryNTimes({ n: 3, sleepMsBetweenRetries: 3 }), promotedToLock: { lockPath, retryPolicy: new RetryNTimes({ n: 3, sleepMsBetweenRetries: 10 }) } });
    const javaRun = peer.request<{ values: string[] }>('atomic.incrementMany', { name: java, count: 40 });
    const mine: bigint[] = [];
    for (let i = 0; i < 40; i++) {
      const value = await ours.increment();
      if (value.succeeded) mine.push(value.postValue);
    }
    const theirs = (await javaRun).values.map((v) => BigInt(v));
    const all = [...mine, ...theirs];
    expect(new Set(all).size).toBe(all.length);
    const final = (await ours.get()).preValue;
    expect(final).toBe(BigInt(all.length));
    expect(await peer.request<Outcome>('atomic.get', { name: java })).toMatchObject({ preValue: String(final) });
  });

  it('DistributedAtomicLong: each reads what the other writes, to the full 64 bits', async () => {
    const path = `${root}/long`;
    const java = await javaAtomic('long', path);
    const ours = new DistributedAtomicLong(client, path);
    expect(await peer.request<{ initialized: boolean }>('atomic.initialize', { name: java, value: '-5' })).toMatchObject({ initialized: true });
    expect(await ours.initialize(1n)).toBe(false);
    expect((await ours.get()).preValue).toBe(-5n);
    await ours.forceSet(2n ** 62n + 3n);
    expect(await peer.request<Outcome>('atomic.increment', { name: java })).toMatchObject({ succeeded: true, preValue: String(2n ** 62n + 3n), postValue: String(2n ** 62n + 4n) });
    expect((await ours.compareAndSet(2n ** 62n + 4n, -(2n ** 63n))).succeeded).toBe(true);
    expect(await peer.request<Outcome>('atomic.get', { name: java })).toMatchObject({ preValue: String(-(2n ** 63n)) });
    expect(await peer.request<Outcome>('atomic.compareAndSet', { name: java, expected: '1', value: '2' })).toMatchObject({ succeeded: false });
  });

  it('DistributedAtomicInteger: 4 bytes both ways', async () => {
    const path = `${root}/int`;
    const java = await javaAtomic('int', path);
    const ours = new DistributedAtomicInteger(client, path);
    await peer.request('atomic.forceSet', { name: java, value: '7' });
    const added = await ours.add(5);
    expect([added.preValue, added.postValue]).toEqual([7, 12]);
    expect(await peer.request<Outcome>('atomic.add', { name: java, delta: '-20' })).toMatchObject({ succeeded: true, preValue: '12', postValue: '-8' });
    expect((await ours.get()).preValue).toBe(-8);
  });

  it('DistributedAtomicValue: the bytes as they are, both ways', async () => {
    const path = `${root}/value`;
    const java = await javaAtomic('value', path);
    const ours = new DistributedAtomicValue(client, path);
    expect(await peer.request<Outcome>('atomic.trySet', { name: java, value: 'hello' })).toMatchObject({ succeeded: true, preValue: null, postValue: 'hello' });
    expect((await ours.compareAndSet('hello', 'world')).succeeded).toBe(true);
    expect(await peer.request<Outcome>('atomic.get', { name: java })).toMatchObject({ preValue: 'world' });
    expect(await peer.request<Outcome>('atomic.compareAndSet', { name: java, expected: 'world', value: 'zk' })).toMatchObject({ succeeded: true });
    expect((await ours.get()).preValue?.toString()).toBe('zk');
  });
});
