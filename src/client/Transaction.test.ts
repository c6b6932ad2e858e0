import { InvalidArgumentError, UnsupportedError, ZkClient } from '..';
import { RetryNTimes } from '../retry';
import { FakeZooKeeper } from '../../test/FakeTransport';

function client(): ZkClient {
  const c = new ZkClient({
    connectString: '127.0.0.1:2181',
    sessionTimeoutMs: 1_000,
    connectionTimeoutMs: 200,
    retryPolicy: new RetryNTimes({ n: 1, sleepMsBetweenRetries: 1 }),
    transportFactory: new FakeZooKeeper().factory(),
  });
  c.start();
  return c;
}

describe('Transaction before any I/O', () => {
  it('checks each operation as it is added', async () => {
    const c = client();
    const tx = c.transaction();
    expect(() => tx.create('no-slash')).toThrow(InvalidArgumentError);
    expect(() => tx.create('/a', { mode: 'NOPE' as never })).toThrow(InvalidArgumentError);
    expect(() => tx.create('/a', { mode: 'PERSISTENT_WITH_TTL' })).toThrow(/ttlMs/);
    expect(() => tx.delete('/a', { version: -2 })).toThrow(InvalidArgumentError);
    expect(() => tx.setData('/a', 5 as never)).toThrow(InvalidArgumentError);
    await expect(c.transaction().commit()).rejects.toThrow(/at least one operation/);
    await c.close();
  });

  it('refuses a transaction too large for the server, whole', async () => {
    const c = client();
    await c.blockUntilConnected({ timeoutMs: 1_000 });
    const big = Buffer.alloc(600_000);
    await expect(c.transaction().create('/a', { data: big }).create('/b', { data: big }).commit()).rejects.toThrow(/request/);
    await c.close();
  });

  it('rejects with UnsupportedError on a transport without multi', async () => {
    const c = client();
    await c.blockUntilConnected({ timeoutMs: 1_000 });
    await expect(c.transaction().create('/a').commit()).rejects.toBeInstanceOf(UnsupportedError);
    await expect(c.watch('/a')).rejects.toBeInstanceOf(UnsupportedError);
    await c.close();
  });

  it('checks the safe mode\'s options before any I/O', async () => {
    const c = client();
    await expect(c.transaction().create('/a').commit({ markerParent: 'no-slash' })).rejects.toThrow(/markerParent/);
    await expect(c.transaction().create('/a').commit({ markerParent: '/m/' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(c.transaction().create('/a').commit({ timeoutMs: -1 })).rejects.toThrow(/timeoutMs/);
    // Counted in the request size: a marker parent too long for the server fails the commit whole.
    await expect(c.transaction().create('/a').commit({ markerParent: `/${'m'.repeat(2_000_000)}` })).rejects.toThrow(/request/);
    await c.close();
  });

  it('a time limit on a commit that cannot reach a server: TimeoutError, since nothing was sent', async () => {
    const c = new ZkClient({
      connectString: '127.0.0.1:2181',
      sessionTimeoutMs: 1_000,
      connectionTimeoutMs: 60_000,
      transportFactory: new FakeZooKeeper().factory(false),
    });
    c.start();
    const started = Date.now();
    await expect(c.transaction().create('/a').commit({ markerParent: '/markers', timeoutMs: 200 })).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(5_000);
    await c.close();
  });
});
