/**
 * The queue's writes through a transaction (the atomic requeue, the lock-safe delete) commit with
 * a marker under the lock path: with their replies lost through a FaultProxy in front of a real
 * server, each multi is sent once and what it did is counted truthfully. Protocol transport only:
 * on the native binding, which has no multi, these write without a transaction.
 */
import { countRequests, loseNext } from '../../../chaos/frames';
import { DistributedIdQueue, DistributedQueue } from '../../../recipes/queue';
import type { ZkClient } from '../../../src';
import { OpCode } from '../../../src/protocol/opcodes';
import { RetryNTimes } from '../../../src/retry';
import { childrenOf, eventually, randomRoot } from '../../helpers';
import { useZooKeeper } from '../../fixture';

const MULTI = OpCode.multi;

describe('queue transactions across lost replies', () => {
  const zk = useZooKeeper({ proxy: 'each' });
  let admin: ZkClient;

  beforeEach(async () => {
    admin = await zk.clients.connect({ connectString: zk.server.connectString });
  });

  /** A client behind the proxy whose requests are counted; counting goes first, so it sees what the faults then drop. */
  async function behindProxy(): Promise<{ client: ZkClient; count(op: number): number }> {
    const counter = countRequests();
    zk.proxy.intercept(counter.interceptor);
    const client = await zk.clients.connect({ connectString: zk.proxy.connectString, retryPolicy: new RetryNTimes({ n: 10, sleepMsBetweenRetries: 100 }) });
    return { client, count: counter.count };
  }

  it('the lock-safe delete of an id queue, reply lost: counts the item as removed, sends once, leaves no node', async () => {
    const root = randomRoot('txn');
    const queue = new DistributedIdQueue<string>(admin, `${root}/q`, { lockPath: `${root}/locks` });
    await queue.put('item', 'id-1');
    const { client, count } = await behindProxy();
    const remover = new DistributedIdQueue<string>(client, `${root}/q`, { lockPath: `${root}/locks` });
    const lost: number[] = [];
    zk.proxy.intercept(loseNext(new Set([MULTI]), 'reply', (l) => lost.push(l.xid)));
    expect(await remover.remove('id-1')).toBe(1);
    expect(lost).toHaveLength(1);
    expect(count(MULTI)).toBe(1);
    expect(await childrenOf(admin, `${root}/q`)).toEqual([]);
    await eventually('no lock node nor marker left', async () => (await childrenOf(admin, `${root}/locks`)).length === 0);
    await remover.close();
    await queue.close();
  });

  it('a requeue and then the delete of the handled item, both replies lost: the item handled twice, once in the queue, each multi sent once', async () => {
    const root = randomRoot('txn');
    const path = `${root}/q`;
    const locks = `${root}/locks`;
    const producer = new DistributedQueue<string>(admin, path, { lockPath: locks });
    await producer.put('work');
    const { client, count } = await behindProxy();
    const lost: number[] = [];
    zk.proxy.intercept(loseNext(new Set([MULTI]), 'reply', (l) => lost.push(l.xid), 2));
    const seen: string[] = [];
    const consumer = new DistributedQueue<string>(client, path, { lockPath: locks, onError: () => undefined });
    consumer.start((item) => {
      seen.push(item);
      if (seen.length === 1) throw new Error('the handler fails once');
    });
    await eventually('the item to be handled twice and gone', async () => seen.length === 2 && (await childrenOf(admin, path)).length === 0);
    await eventually('no lock node nor marker left', async () => (await childrenOf(admin, locks)).length === 0);
    await consumer.close();
    await producer.close();
    expect(seen).toEqual(['work', 'work']);
    expect(lost).toHaveLength(2);
    expect(count(MULTI)).toBe(2);
  });
});
