import { DistributedAtomicInteger, DistributedAtomicLong, DistributedAtomicValue, AtomicValueCorruptError, encodeLong } from '../../../recipes/atomic';
import { SharedCount } from '../../../recipes/shared';
import { ExponentialBackoffRetry, InvalidArgumentError, RetryOneTime, ZkClient } from '../../../src';
import { randomRoot } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { InstrumentedTransports } from '../../instrumentedTransports';

describe('DistributedAtomicLong, DistributedAtomicInteger, DistributedAtomicValue', () => {
  let root: string;

  const zk = useZooKeeper();
  beforeEach(() => {
    root = randomRoot('atomic');
  });

  const connect = () => zk.clients.connect({ connectString: zk.server.connectString });
  const once = () => ({ retryPolicy: new RetryOneTime({ sleepMsBetweenRetry: 1 }) });

  // Curator's testBasic.
  it('increments, decrements, adds and subtracts, one optimistic try each, as 8 big-endian bytes', async () => {
    const client = await connect();
    const counter = new DistributedAtomicLong(client, `${root}/foo/bar/counter`, once());
    let value = await counter.increment();
    expect([value.succeeded, value.preValue, value.postValue, value.stats.optimisticTries, value.stats.promotedLockTries]).toEqual([true, 0n, 1n, 1, 0]);
    value = await counter.decrement();
    expect([value.succeeded, value.preValue, value.postValue, value.stats.optimisticTries]).toEqual([true, 1n, 0n, 1]);
    value = await counter.add(10n);
    expect([value.preValue, value.postValue]).toEqual([0n, 10n]);
    value = await counter.subtract(5n);
    expect([value.preValue, value.postValue]).toEqual([10n, 5n]);
    expect((await client.getData(`${root}/foo/bar/counter`)).data).toEqual(Buffer.from([0, 0, 0, 0, 0, 0, 0, 5]));
    // The parents are containers, as Curator's creatingParentContainersIfNeeded makes them.
    expect((await client.exists(`${root}/foo/bar`))?.ephemeralOwner).toBe(0n);
    expect((await counter.get()).postValue).toBe(5n);
  });

  // Curator's testCompareAndSetWithFreshInstance.
  it('compareAndSet does not succeed on a node that does not exist; initialize creates it once', async () => {
    const client = await connect();
    const counter = new DistributedAtomicLong(client, `${root}/counter`, once());
    expect((await counter.compareAndSet(0n, 1n)).succeeded).toBe(false);
    expect(await counter.initialize(0n)).toBe(true);
    const result = await counter.compareAndSet(0n, 1n);
    expect([result.succeeded, result.preValue, result.postValue]).toEqual([true, 0n, 1n]);
    expect(await counter.initialize(0n)).toBe(false);
    expect((await counter.get()).preValue).toBe(1n);
  });

  // Curator's testCompareAndSet: another writer slips in between the read and the write.
  it('compareAndSet loses to a writer between its read and its write; trySet tries again under its policy', async () => {
    const transports = new InstrumentedTransports();
    const client = await zk.clients.connect({ connectString: zk.server.connectString, transportFactory: transports.factory });
    const other = await connect();
    const path = `${root}/counter`;
    const counter = new DistributedAtomicLong(client, path, once());
    const rival = new DistributedAtomicLong(other, path, once());
    await counter.forceSet(1n);
    expect((await counter.compareAndSet(1n, 5n)).succeeded).toBe(true);
    expect((await counter.compareAndSet(1n, 5n)).succeeded).toBe(false);

    let held = transports.holdNext('getData', path);
    const lost = counter.compareAndSet(5n, 10n);
    await held.reached;
    await rival.increment();
    held.release();
    const result = await lost;
    expect([result.succeeded, result.preValue, result.postValue]).toEqual([false, 5n, 0n]);

    held = transports.holdNext('getData', path);
    const retried = counter.trySet(42n);
    await held.reached;
    await rival.increment();
    held.release();
    const second = await retried;
    expect([second.succeeded, second.preValue, second.postValue, second.stats.optimisticTries]).toEqual([true, 7n, 42n, 2]);
  });

  // Curator's testCorruptedValue, with one behaviour for every operation: a corrupt node rejects
  // with AtomicValueCorruptError and is never written over but by forceSet.
  it('rejects every operation on a node with too few bytes and writes nothing, until forceSet repairs it', async () => {
    const client = await connect();
    const path = `${root}/counter`;
    await client.create(path, { data: 'foo', createParents: 'persistent' });
    const counter = new DistributedAtomicLong(client, path, once());
    await expect(counter.get()).rejects.toThrow(AtomicValueCorruptError);
    await expect(counter.increment()).rejects.toThrow(AtomicValueCorruptError);
    await expect(counter.compareAndSet(0n, 1n)).rejects.toThrow(AtomicValueCorruptError);
    await expect(counter.trySet(3n)).rejects.toMatchObject({ name: 'AtomicValueCorruptError', code: 'BAD_DATA', path });
    expect((await client.getData(path)).data.toString()).toBe('foo');
    const int = new DistributedAtomicInteger(client, path, once());
    await expect(int.get()).rejects.toThrow(AtomicValueCorruptError);
    await expect(int.trySet(3)).rejects.toThrow(AtomicValueCorruptError);
    expect((await client.getData(path)).data.toString()).toBe('foo');
    // forceSet sets the value whatever it is: the way to repair the node.
    await counter.forceSet(3n);
    expect((await counter.get()).postValue).toBe(3n);
    // No bytes at all read as 0, as Curator reads them.
    await client.setData(path, Buffer.alloc(0));
    expect((await counter.increment()).postValue).toBe(1n);
  });

  // Curator's testSimulation, with a check it lacks: no increment is lost or counted twice.
  it('many writers promoted to one lock: every increment that succeeded is counted once, and each writer sees its values grow', async () => {
    const writers = 8;
    const increments = 15;
    const path = `${root}/counter`;
    const lockPath = `${root}/lock`;
    const policy = () => new ExponentialBackoffRetry({ baseSleepMs: 3, maxRetries: 3 });
    let succeeded = 0;
    let optimistic = 0;
    let promoted = 0;
    const errors: string[] = [];
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        const client = await connect();
        const counter = new DistributedAtomicLong(client, path, { retryPolicy: policy(), promotedToLock: { lockPath, retryPolicy: policy() } });
        let previous = -1n;
        for (let i = 0; i < increments; i++) {
          const value = await counter.increment();
          optimistic += value.stats.optimisticTries;
          promoted += value.stats.promotedLockTries;
          if (!value.succeeded) continue;
          succeeded++;
          if (value.postValue <= previous) errors.push(`writer ${w}: ${value.postValue} after ${previous}`);
          previous = value.postValue;
        }
      }),
    );
    expect(errors).toEqual([]);
    expect(optimistic).toBeGreaterThanOrEqual(writers * increments);
    expect(promoted).toBeGreaterThan(0);
    const client = await connect();
    expect((await new DistributedAtomicLong(client, path).get()).preValue).toBe(BigInt(succeeded));
  });

  it('a promoted lock that is not had in time means the update did not succeed', async () => {
    const client = await connect();
    const other = await connect();
    const path = `${root}/counter`;
    const lockPath = `${root}/lock`;
    const { InterProcessMutex } = await import('../../../recipes/locks');
    const lease = await new InterProcessMutex(other, lockPath).acquire();
    const transports = new InstrumentedTransports();
    const racer = await zk.clients.connect({ connectString: zk.server.connectString, transportFactory: transports.factory });
    const counter = new DistributedAtomicLong(racer, path, { retryPolicy: new RetryOneTime({ sleepMsBetweenRetry: 0 }), promotedToLock: { lockPath, timeoutMs: 300 } });
    await counter.initialize(0n);
    // Both optimistic attempts lose their race.
    const rival = new DistributedAtomicLong(client, path);
    const loseRaces = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const held = transports.holdNext('getData', path);
        await held.reached;
        await rival.increment();
        held.release();
      }
    };
    let racing = loseRaces(2);
    const result = await counter.increment();
    await racing;
    expect(result.succeeded).toBe(false);
    expect(result.stats.optimisticTries).toBe(2);
    expect(result.stats.promotedLockTries).toBe(0);
    expect(result.stats.promotedTimeMs).toBeGreaterThanOrEqual(250);
    await lease.release();
    // With the lock free, the promoted attempt runs.
    racing = loseRaces(2);
    const second = await counter.increment();
    await racing;
    expect([second.succeeded, second.stats.optimisticTries, second.stats.promotedLockTries]).toEqual([true, 2, 1]);
  });

  it('DistributedAtomicInteger writes 4 bytes a SharedCount reads, and wraps at 32 bits as Java does', async () => {
    const client = await connect();
    const path = `${root}/int`;
    const counter = new DistributedAtomicInteger(client, path, once());
    expect(await counter.initialize(2 ** 31 - 1)).toBe(true);
    expect((await client.getData(path)).data).toEqual(Buffer.from([0x7f, 0xff, 0xff, 0xff]));
    const wrapped = await counter.increment();
    expect([wrapped.preValue, wrapped.postValue]).toEqual([2 ** 31 - 1, -(2 ** 31)]);
    const shared = new SharedCount(client, path, 0);
    await shared.start();
    expect(shared.getCount()).toBe(-(2 ** 31));
    await shared.setCount(7);
    expect((await counter.add(3)).postValue).toBe(10);
    shared.close();
  });

  it('DistributedAtomicLong wraps at 64 bits', async () => {
    const client = await connect();
    const counter = new DistributedAtomicLong(client, `${root}/long`, once());
    await counter.forceSet(2n ** 63n - 1n);
    expect((await counter.increment()).postValue).toBe(-(2n ** 63n));
    expect(encodeLong(-1n)).toEqual(Buffer.alloc(8, 0xff));
  });

  it('DistributedAtomicValue: bytes as they are; null before the first write; update is a read-modify-write', async () => {
    const client = await connect();
    const path = `${root}/value`;
    const value = new DistributedAtomicValue(client, path, once());
    expect((await value.get()).preValue).toBeNull();
    const first = await value.trySet(Buffer.from('one'));
    expect([first.succeeded, first.preValue, first.postValue?.toString()]).toEqual([true, null, 'one']);
    expect((await value.compareAndSet('one', 'two')).succeeded).toBe(true);
    expect((await value.compareAndSet('one', 'three')).succeeded).toBe(false);
    const appended = await value.update((previous) => Buffer.concat([previous ?? Buffer.alloc(0), Buffer.from('!')]));
    expect(appended.postValue?.toString()).toBe('two!');
    expect((await client.getData(path)).data.toString()).toBe('two!');
    await value.forceSet('');
    expect((await value.get()).preValue).toEqual(Buffer.alloc(0));
    await expect(value.update(() => {
      throw new Error('no');
    })).rejects.toThrow('no');
  });

  it('refuses bad input: the constructor throws, the operations reject before any I/O', async () => {
    const client = new ZkClient({ connectString: zk.server.connectString });
    expect(() => new DistributedAtomicLong({} as ZkClient, '/x')).toThrow(InvalidArgumentError);
    expect(() => new DistributedAtomicLong(client, 'x')).toThrow(InvalidArgumentError);
    expect(() => new DistributedAtomicLong(client, '/x', { retryPolicy: {} as never })).toThrow(InvalidArgumentError);
    expect(() => new DistributedAtomicLong(client, '/x', { promotedToLock: { lockPath: '/zookeeper/x' } })).toThrow(InvalidArgumentError);
    const counter = new DistributedAtomicLong(client, '/x');
    // The client is not even started: nothing reaches a server.
    await expect(counter.add(2n ** 63n)).rejects.toThrow(InvalidArgumentError);
    await expect(counter.add(1.5 as unknown as bigint)).rejects.toThrow(InvalidArgumentError);
    await expect(counter.increment({ signal: 'x' as unknown as AbortSignal })).rejects.toThrow(InvalidArgumentError);
    await expect(new DistributedAtomicInteger(client, '/y').add(2 ** 31 as number)).rejects.toThrow(InvalidArgumentError);
    await expect(new DistributedAtomicValue(client, '/z').trySet(Buffer.alloc(2_000_000))).rejects.toThrow(InvalidArgumentError);
    await expect(new DistributedAtomicValue(client, '/z').update('x' as never)).rejects.toThrow(InvalidArgumentError);
    await client.close();
  });
});
