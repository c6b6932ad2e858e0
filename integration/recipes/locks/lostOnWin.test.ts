import { InterProcessMutex, InterProcessSemaphoreV2 } from '../../../recipes/locks';
import { StateRecorder, childrenOf, eventually, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { InstrumentedTransports } from '../../instrumentedTransports';

/**
 * A lock won just as the connection drops can no longer be trusted: it must not be handed out with
 * its signal already aborted (a "dead lease": a caller that does not look at the signal first
 * would work without the lock). The acquire lets the node go and tries again.
 */
describe('a lock won as the connection drops is not handed out lost', () => {
  const zk = useZooKeeper({ proxy: 'each' });

  /** Once the winning read has its answer, drops the connection, then lets the answer through and heals. */
  async function dropWhileHeld(held: { reached: Promise<void>; release(): void }, states: StateRecorder): Promise<void> {
    await held.reached;
    const mark = states.mark();
    zk.proxy.cut();
    await states.waitFor('SUSPENDED', mark);
    held.release();
    zk.proxy.heal();
  }

  it('InterProcessMutex', async () => {
    const path = `${randomRoot('dead')}/lock`;
    const traced = new InstrumentedTransports();
    const client = await zk.clients.connect({ connectString: zk.proxy.connectString, transportFactory: traced.factory, sessionTimeoutMs: 20_000 });
    const states = new StateRecorder(client);
    // The listing sent with the create proves the win.
    const held = traced.holdNext('getChildren', path);
    const acquiring = new InterProcessMutex(client, path).acquire({ timeoutMs: timing(30_000) });
    await dropWhileHeld(held, states);
    const lease = await acquiring;
    expect(lease.signal.aborted).toBe(false);
    await eventually('only the node of the lease left', async () => (await childrenOf(client, path)).length === 1);
    expect(await childrenOf(client, path)).toEqual([lease.node.slice(path.length + 1)]);
    await lease.release();
  });

  it('InterProcessSemaphoreV2', async () => {
    const path = `${randomRoot('dead')}/semaphore`;
    const traced = new InstrumentedTransports();
    const client = await zk.clients.connect({ connectString: zk.proxy.connectString, transportFactory: traced.factory, sessionTimeoutMs: 20_000 });
    const states = new StateRecorder(client);
    // The read of the lease node that makes the lease.
    const held = traced.holdNext('exists', (p) => p.startsWith(`${path}/leases/_c_`));
    const acquiring = new InterProcessSemaphoreV2(client, path, { maxLeases: 1 }).acquire({ timeoutMs: timing(30_000) });
    await dropWhileHeld(held, states);
    const [lease] = await acquiring;
    expect(lease.signal.aborted).toBe(false);
    await eventually('only the lease node of the lease left', async () => (await childrenOf(client, `${path}/leases`)).length === 1);
    await lease.release();
  });
});
