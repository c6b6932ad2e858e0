import { ZkClient } from '..';
import { RetryNTimes } from '../retry';
import { FakeTransport, FakeZooKeeper } from '../../test/FakeTransport';

// The background deletes go round again after every connection problem, until done.
describe('background deletes (in-memory fake)', () => {
  it('pause between tries, so a transport that fails at once while the client still takes it for connected cannot hold the event loop', async () => {
    const zk = new FakeZooKeeper();
    const client = new ZkClient({
      connectString: '127.0.0.1:2181',
      sessionTimeoutMs: 60_000,
      connectionTimeoutMs: 100,
      retryPolicy: new RetryNTimes({ n: 0, sleepMsBetweenRetries: 1 }),
      transportFactory: zk.factory(false),
    });
    client.start();
    const t = zk.transports[zk.transports.length - 1] as FakeTransport;
    t.connect();
    await client.create('/x');
    // Every call fails at once, with the connection still reported up.
    for (let i = 0; i < 1_000; i++) t.failures.push('CONNECTIONLOSS');
    await expect(client.delete('/x', { guaranteed: true })).rejects.toMatchObject({ code: 'CONNECTIONLOSS' });

    // One turn of the event loop: the tries made meanwhile are few, not the thousand failures.
    await new Promise((resolve) => setImmediate(resolve));
    const tries = zk.calls.filter((c) => c === 'delete /x').length;
    expect(tries).toBeLessThan(10);

    t.failures.length = 0;
    const deadline = Date.now() + 5_000;
    while (client.pendingBackgroundDeletes > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(zk.nodes.has('/x')).toBe(false);
    await client.close();
  });
});
