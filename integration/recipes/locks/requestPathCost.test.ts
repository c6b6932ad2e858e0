import { getEventListeners } from 'node:events';
import type { ZkClient } from '../../../src';
import { InterProcessMutex } from '../../../recipes/locks';
import { controllersBuiltBy, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';

describe('the cost of an uncontended acquire and release', () => {
  const zk = useZooKeeper();
  let client: ZkClient;
  let mutex: InterProcessMutex;

  beforeEach(async () => {
    client = await zk.connect();
    mutex = new InterProcessMutex(client, `${randomRoot('cost')}/lock`);
    // A persistent lock path: as a container, the server could reap it between two pairs, and the
    // next pair would make it again (more requests than the pair's own).
    await client.ensurePath(mutex.path);
    // The first pair warms the path up: what is measured is the pairs after it.
    await (await mutex.acquire()).release();
  });

  it('builds no AbortController when the acquire has neither a deadline nor a signal', async () => {
    const { built } = await controllersBuiltBy(async () => {
      const lease = await mutex.acquire();
      expect(lease.fencingToken).toBeGreaterThan(0n);
      await lease.release();
    });
    expect(built).toBe(0);
    expect(await client.getChildren(mutex.path)).toEqual([]);
  });

  it('builds one AbortController per acquisition with a deadline, none for the release', async () => {
    const { built } = await controllersBuiltBy(async () => {
      const lease = await mutex.acquire({ timeoutMs: timing(30_000) });
      await lease.release();
    });
    expect(built).toBe(1);
    expect(await client.getChildren(mutex.path)).toEqual([]);
  });

  it('uses the caller signal as it is when there is no deadline', async () => {
    const caller = new AbortController();
    const { built } = await controllersBuiltBy(async () => {
      const lease = await mutex.acquire({ signal: caller.signal });
      await lease.release();
    });
    expect(built).toBe(0);
  });

  it('adds no listener per hold: the client keeps its state listeners, the session its abort listeners', async () => {
    const session = client.session;
    if (session === undefined) throw new Error('the client has no session');
    const listeners = () => ({ states: client.listenerCount('stateChanged'), sessionEnd: getEventListeners(session.signal, 'abort').length });
    const before = listeners();
    // Three holds at once, on three locks: each would add its own pair of listeners.
    const others = [1, 2].map((i) => new InterProcessMutex(client, `${mutex.path}-${i}`));
    const leases = await Promise.all([mutex, ...others].map((m) => m.acquire()));
    expect(listeners()).toEqual(before);
    await Promise.all(leases.map((lease) => lease.release()));
    expect(listeners()).toEqual(before);
  });
});
