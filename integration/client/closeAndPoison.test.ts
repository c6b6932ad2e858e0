import { LeaderLatch, LeaderLatchClosedError, LeaderSelector } from '../../recipes/leader';
import { InterProcessMutex, LockLostError } from '../../recipes/locks';
import { ClientClosedError, InvalidArgumentError, MAX_DATA_BYTES } from '../../src';
import { FaultProxy } from '../../src/testing';
import { StateRecorder, aborted, nextEvent, randomRoot, timing } from '../helpers';
import { useZooKeeper } from '../fixture';

describe('closing a client, and requests that cannot fit', () => {
  let root: string;

  const zk = useZooKeeper();
  beforeEach(() => {
    root = randomRoot('close');
  });

  it('a request too large for the server is refused before it is sent; the connection and a lease on it are untouched', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const states = new StateRecorder(client);
    const mark = states.mark();
    const lease = await new InterProcessMutex(client, `${root}/lock`).acquire();
    const signal = lease.signal;
    // Data within the data limit, under a path longer than the room the limit keeps for it.
    const longPath = `${root}/${'p'.repeat(1_100)}`;
    const data = Buffer.alloc(MAX_DATA_BYTES);
    await expect(client.create(longPath, { data })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client.create(longPath, { data })).rejects.toThrow(/request/);
    await client.create(longPath);
    await expect(client.setData(longPath, data)).rejects.toBeInstanceOf(InvalidArgumentError);
    // A round trip after them: had anything been sent, the server would have dropped the connection.
    await client.sync('/');
    expect(states.since(mark)).toEqual([]);
    expect(signal.aborted).toBe(false);
    await lease.release();
  });

  it('a request in flight when close() resolves has settled, with ClientClosedError, even when the server no longer answers', async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const client = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 30_000 });
    await client.create(root);
    proxy.blackhole();
    const read = client.getData(root);
    read.catch(() => undefined);
    await client.close();
    // It ends with the close, not when the connection would time out (20 s here), in someone else's time.
    const outcome = await Promise.race([read.then(() => 'resolved', (err: unknown) => err), nextEvent<string>(() => undefined, 'the read to settle', timing(2_000)).catch(() => 'still pending')]);
    expect(outcome).toBeInstanceOf(ClientClosedError);
  });

  it('closing the client aborts its leases, ends its latches, and interrupts its selectors, saying why', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const lease = await new InterProcessMutex(client, `${root}/lock`).acquire();
    const latch = new LeaderLatch(client, `${root}/latch`, { id: 'l' });
    latch.start();
    await latch.await({ timeoutMs: timing(10_000) });
    const notLeader = new Promise<void>((resolve) => latch.on('notLeader', () => resolve()));
    let leadershipSignal!: AbortSignal;
    const leading = new Promise<void>((resolve) => {
      const selector = new LeaderSelector(client, `${root}/selector`, {
        id: 's',
        takeLeadership: (signal) => {
          leadershipSignal = signal;
          resolve();
          return new Promise((done) => signal.addEventListener('abort', () => done()));
        },
      });
      selector.start();
    });
    await leading;
    const second = new LeaderLatch(client, `${root}/latch`, { id: 'second' });
    second.start();
    const waiting = second.await();
    waiting.catch(() => undefined);

    await client.close();

    const leaseReason = await aborted(lease.signal);
    expect(leaseReason).toBeInstanceOf(LockLostError);
    expect(leaseReason).toMatchObject({ reason: 'CLIENT_CLOSED' });
    await notLeader;
    expect(latch.hasLeadership).toBe(false);
    const latchError = await waiting.catch((e: unknown) => e);
    expect(latchError).toBeInstanceOf(LeaderLatchClosedError);
    expect((latchError as Error).cause).toBeInstanceOf(ClientClosedError);
    expect(await aborted(leadershipSignal)).toMatchObject({ reason: 'CLIENT_CLOSED' });
  });
});
