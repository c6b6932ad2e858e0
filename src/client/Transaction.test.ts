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
});
