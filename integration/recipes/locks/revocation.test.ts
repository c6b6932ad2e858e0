import { InterProcessMutex, Revoker, REVOKE_MESSAGE } from '../../../recipes/locks';
import { nextEvent, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';

describe('InterProcessMutex revocation', () => {

  const zk = useZooKeeper();

  it('a revocable holder hears Revoker.attemptRevoke and lets go; the waiter then acquires', async () => {
    const path = `${randomRoot('revoke')}/lock`;
    const holderClient = await zk.clients.connect({ connectString: zk.server.connectString });
    const waiterClient = await zk.clients.connect({ connectString: zk.server.connectString });
    const mutex = new InterProcessMutex(holderClient, path);
    let revoked: (m: InterProcessMutex) => void = () => undefined;
    const revokedPromise = nextEvent<InterProcessMutex>((done) => (revoked = done), 'the revocation');
    mutex.makeRevocable((m) => revoked(m));
    const lease = await mutex.acquire();
    expect((await holderClient.getData(lease.node)).data.toString()).not.toBe(REVOKE_MESSAGE);

    const waiting = new InterProcessMutex(waiterClient, path).acquire({ timeoutMs: timing(20_000) });
    await Revoker.attemptRevoke(waiterClient, lease.node);
    expect(await revokedPromise).toBe(mutex);
    await lease.release();
    const next = await waiting;
    expect(next.fencingToken).toBeGreaterThan(lease.fencingToken);
    await next.release();
  });

  it('revoking a node that is gone is fine, and a lock that is not revocable ignores the request', async () => {
    const path = `${randomRoot('revoke')}/lock`;
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    await Revoker.attemptRevoke(client, `${path}/_c_00000000-0000-0000-0000-000000000000-lock-0000000000`);
    const mutex = new InterProcessMutex(client, path);
    const lease = await mutex.acquire();
    await Revoker.attemptRevoke(client, lease.node);
    // Not revocable: the holder keeps the lock, and its signal is not aborted by the data change.
    expect(lease.signal.aborted).toBe(false);
    expect(mutex.isAcquiredInThisProcess()).toBe(true);
    await lease.release();
  });
});
