import { BarrierTimeoutError, DistributedBarrier } from '../../../recipes/barriers';
import { InvalidArgumentError, ZkClient } from '../../../src';
import { eventually, isWatching, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';

describe('DistributedBarrier', () => {
  const zk = useZooKeeper();
  let path: string;

  beforeEach(() => {
    path = `${randomRoot('barrier')}/jobs/barrier`;
  });

  const connect = () => zk.clients.connect({ connectString: zk.server.connectString });

  // Curator's testBasic and testMultiClient.
  it('holds every waiter while the barrier is set, and lets them all go when it is removed', async () => {
    const setter = new DistributedBarrier(await connect(), path);
    await setter.setBarrier();
    await setter.setBarrier();
    const owner = await connect();
    // The node is persistent; its missing parents are containers.
    expect((await owner.exists(path))?.ephemeralOwner).toBe(0n);
    let released = 0;
    const waiters = await Promise.all([connect(), connect()]);
    const waits = waiters.map((c) =>
      new DistributedBarrier(c, path).waitOnBarrier({ timeoutMs: timing(20_000) }).then(() => {
        released++;
      }),
    );
    // Both waiters watch the node (the server shows their watches) and are still held.
    for (const c of waiters) await eventually('the waiter to watch the barrier', () => isWatching(zk.server, path, c.sessionId));
    expect(released).toBe(0);
    await new DistributedBarrier(owner, path).removeBarrier();
    await Promise.all(waits);
    expect(released).toBe(2);
    await new DistributedBarrier(owner, path).removeBarrier();
  });

  // Curator's testNoBarrier.
  it('a wait on a barrier that is not set resolves at once', async () => {
    const barrier = new DistributedBarrier(await connect(), path);
    await barrier.waitOnBarrier({ timeoutMs: timing(5_000) });
    await barrier.waitOnBarrier();
  });

  it('a wait rejects with BarrierTimeoutError in time, and with the reason of an aborted signal', async () => {
    const barrier = new DistributedBarrier(await connect(), path);
    await barrier.setBarrier();
    const startedAt = Date.now();
    await expect(barrier.waitOnBarrier({ timeoutMs: 300 })).rejects.toThrow(BarrierTimeoutError);
    expect(Date.now() - startedAt).toBeLessThan(timing(1_500));
    const controller = new AbortController();
    const waiting = barrier.waitOnBarrier({ signal: controller.signal });
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });

  it('refuses bad input: the constructor throws, the methods reject before any I/O', async () => {
    const client = new ZkClient({ connectString: zk.server.connectString });
    expect(() => new DistributedBarrier(undefined as unknown as ZkClient, path)).toThrow(InvalidArgumentError);
    expect(() => new DistributedBarrier(client, '/')).toThrow(InvalidArgumentError);
    const barrier = new DistributedBarrier(client, path);
    await expect(barrier.waitOnBarrier({ timeoutMs: -1 })).rejects.toThrow(InvalidArgumentError);
    await expect(barrier.setBarrier({ signal: {} as AbortSignal })).rejects.toThrow(InvalidArgumentError);
    await expect(barrier.removeBarrier(5 as never)).rejects.toThrow(InvalidArgumentError);
    await client.close();
  });
});
