import { ConnectionTimeoutError, ZkError, type RetryPolicy } from '../../src';
import { RetryNTimes } from '../../src/retry';
import { TestingServer } from '../../src/testing';
import { StateRecorder, randomRoot, timing, watchNode } from '../helpers';
import { useZooKeeper } from '../fixture';

/** A policy that records what it was asked. */
function recordingPolicy(inner: RetryPolicy): RetryPolicy & { calls: Array<{ retryCount: number; code: string }> } {
  const calls: Array<{ retryCount: number; code: string }> = [];
  return {
    calls,
    allowRetry(retryCount, elapsedMs, error) {
      calls.push({ retryCount, code: (error as ZkError).code });
      return inner.allowRetry(retryCount, elapsedMs, error);
    },
  };
}

describe('ZkClient retries', () => {
  const zk = useZooKeeper({ proxy: 'each' });

  it('an operation started during a short cut succeeds after the heal', async () => {
    const root = randomRoot();
    const client = await zk.clients.connect({ connectString: zk.proxy.connectString, connectionTimeoutMs: timing(20_000) });
    const states = new StateRecorder(client);
    const mark = states.mark();
    zk.proxy.cut();
    await states.waitFor('SUSPENDED', mark);
    const pending = client.create(root, { data: 'after the heal' });
    zk.proxy.heal();
    expect(await pending).toBe(root);
    expect((await client.getData(root)).data.toString()).toBe('after the heal');
  });

  it('a non-retryable error is not retried', async () => {
    const policy = recordingPolicy(new RetryNTimes({ n: 5, sleepMsBetweenRetries: 10 }));
    const client = await zk.clients.connect({ connectString: zk.proxy.connectString, retryPolicy: policy });
    await expect(client.getData(`${randomRoot()}/missing`)).rejects.toMatchObject({ code: 'NONODE' });
    await expect(client.create(`${randomRoot()}/no/parent`)).rejects.toMatchObject({ code: 'NONODE' });
    expect(policy.calls).toEqual([]);
  });

  it('retries a wait for a connection under the policy, then gives up with a ConnectionTimeoutError that says where and how long', async () => {
    const policy = recordingPolicy(new RetryNTimes({ n: 2, sleepMsBetweenRetries: 10 }));
    const client = await zk.clients.connect({ connectString: zk.proxy.connectString, retryPolicy: policy, connectionTimeoutMs: 300 });
    const states = new StateRecorder(client);
    const mark = states.mark();
    zk.proxy.cut();
    await states.waitFor('SUSPENDED', mark);
    const err = await client.getData('/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionTimeoutError);
    expect((err as Error).message).toMatch(new RegExp(`^no connection to ${zk.proxy.connectString} within \\d+ ms`));
    expect(policy.calls).toEqual([
      { retryCount: 0, code: 'CONNECTION_TIMEOUT' },
      { retryCount: 1, code: 'CONNECTION_TIMEOUT' },
      { retryCount: 2, code: 'CONNECTION_TIMEOUT' },
    ]);
  });

  it('a request sent into a connection that was just reset reports SUSPENDED at once instead of hanging', async () => {
    // The C client finds the reset while sending, inside the call; the binding would look at it
    // again only a third of the session timeout later.
    const client = await zk.clients.connect({ connectString: zk.proxy.connectString, sessionTimeoutMs: 60_000, connectionTimeoutMs: 200 });
    const states = new StateRecorder(client);
    const mark = states.mark();
    zk.proxy.cut();
    const started = Date.now();
    const op = client.getData('/');
    await states.waitFor('SUSPENDED', mark, timing(5_000));
    // The retries wait for a connection that does not come, and give up.
    await expect(op).rejects.toBeInstanceOf(ConnectionTimeoutError);
    // Well under the 20 s a hang until the binding's next look would take.
    expect(Date.now() - started).toBeLessThan(timing(15_000));
  });

  it('a guaranteed delete that fails on a partition is finished in the background after the heal', async () => {
    const root = randomRoot();
    const observer = await zk.clients.connect({ connectString: zk.server.connectString });
    const client = await zk.clients.connect({
      connectString: zk.proxy.connectString,
      retryPolicy: new RetryNTimes({ n: 1, sleepMsBetweenRetries: 10 }),
      connectionTimeoutMs: 300,
    });
    await client.create(root);
    const states = new StateRecorder(client);
    const deleted = (await watchNode(observer, root)).next;
    const mark = states.mark();
    zk.proxy.cut();
    await states.waitFor('SUSPENDED', mark);
    await expect(client.delete(root, { guaranteed: true })).rejects.toBeInstanceOf(ConnectionTimeoutError);
    expect(client.pendingBackgroundDeletes).toBe(1);
    zk.proxy.heal();
    expect(await deleted).toBe('deleted');
  });

  it('an operation waits for the first connection when the server comes up late', async () => {
    const late = await TestingServer.start({ forceSync: false });
    const port = late.port;
    await late.stop();
    try {
      const client = zk.clients.create({ connectString: `127.0.0.1:${port}`, connectionTimeoutMs: timing(20_000) });
      client.start();
      const pending = client.create(randomRoot(), { data: 'late' });
      await late.start();
      await expect(pending).resolves.toMatch(/^\/it-/);
    } finally {
      await late.close();
    }
  });
});
