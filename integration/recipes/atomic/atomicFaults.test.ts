import { DistributedAtomicLong } from '../../../recipes/atomic';
import { RetryNTimes } from '../../../src';
import { FaultProxy, expireSession } from '../../../src/testing';
import { StateRecorder, childrenOf, eventually, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { InstrumentedTransports } from '../../instrumentedTransports';

describe('the atomic values under faults', () => {
  let path: string;

  const zk = useZooKeeper();
  beforeEach(() => {
    path = `${randomRoot('atomic-faults')}/counter`;
  });

  const policy = () => ({ retryPolicy: new RetryNTimes({ n: 50, sleepMsBetweenRetries: 5 }) });

  it('a server restart in the middle of increments: every call settles, and no two successes report the same value', async () => {
    const writers = await Promise.all([0, 1].map(() => zk.clients.connect({ connectString: zk.server.connectString, retryPolicy: new RetryNTimes({ n: 40, sleepMsBetweenRetries: 250 }) })));
    const reported: bigint[] = [];
    let failures = 0;
    let stop = false;
    const loops = writers.map(async (client) => {
      const counter = new DistributedAtomicLong(client, path, policy());
      while (!stop) {
        try {
          const value = await counter.increment();
          if (value.succeeded) reported.push(value.postValue);
        } catch {
          failures++;
        }
      }
    });
    await eventually('increments under way', () => reported.length >= 5);
    const before = reported.length;
    await zk.server.restart();
    const resumedAt = reported.length;
    await eventually('increments after the restart', () => reported.length >= resumedAt + 5);
    stop = true;
    await Promise.all(loops);
    expect(before).toBeGreaterThan(0);
    expect(reported.length).toBeGreaterThan(resumedAt);
    expect(new Set(reported).size).toBe(reported.length);
    const final = (await new DistributedAtomicLong(writers[0], path).get()).preValue;
    // A write whose reply was lost in the restart counts once more than reported (documented).
    expect(final).toBeGreaterThanOrEqual(BigInt(reported.length));
    expect(final).toBeLessThanOrEqual(BigInt(reported.length + failures + 2));
    expect(reported.reduce((a, b) => (a > b ? a : b))).toBeLessThanOrEqual(final);
  });

  it('a session expiry while an update holds the promoted lock: the update completes by its version check, and the lock is free again', async () => {
    const transports = new InstrumentedTransports();
    const client = await zk.clients.connect({ connectString: zk.server.connectString, transportFactory: transports.factory });
    const other = await zk.clients.connect({ connectString: zk.server.connectString });
    const states = new StateRecorder(client);
    const lockPath = `${path}-lock`;
    const counter = new DistributedAtomicLong(client, path, {
      retryPolicy: new RetryNTimes({ n: 0, sleepMsBetweenRetries: 0 }),
      promotedToLock: { lockPath, retryPolicy: new RetryNTimes({ n: 5, sleepMsBetweenRetries: 10 }) },
    });
    expect((await counter.increment()).postValue).toBe(1n);
    // The optimistic attempt loses a race; the attempt under the lock is held while the session expires.
    const optimistic = transports.holdNext('getData', path);
    const update = counter.increment();
    await optimistic.reached;
    await new DistributedAtomicLong(other, path).increment();
    const promoted = transports.holdNext('getData', path);
    optimistic.release();
    await promoted.reached;
    expect(await childrenOf(other, lockPath)).toHaveLength(1);
    const mark = states.mark();
    await expireSession(client);
    await states.waitFor('RECONNECTED', mark);
    promoted.release();
    const result = await update;
    expect([result.succeeded, result.preValue, result.postValue, result.stats.promotedLockTries]).toEqual([true, 2n, 3n, 1]);
    // The lock node went with the session; the next update carries on in the new one.
    expect(await childrenOf(other, lockPath)).toEqual([]);
    expect((await counter.increment()).postValue).toBe(4n);
  });

  it('a partition: an update bounded by a signal rejects in time; after the heal the value is consistent', async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const client = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 6_000 });
    const other = await zk.clients.connect({ connectString: zk.server.connectString });
    const counter = new DistributedAtomicLong(client, path, policy());
    await counter.increment();
    proxy.blackhole();
    const startedAt = Date.now();
    await expect(counter.increment({ signal: AbortSignal.timeout(500) })).rejects.toThrow();
    expect(Date.now() - startedAt).toBeLessThan(timing(1_500));
    // Meanwhile the rest of the world goes on.
    await new DistributedAtomicLong(other, path, policy()).add(10n);
    proxy.heal();
    const after = await counter.increment();
    expect(after.succeeded).toBe(true);
    expect(after.postValue).toBe(12n);
  });
});
