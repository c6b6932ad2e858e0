import { BarrierTimeoutError, DistributedDoubleBarrier } from '../../../recipes/barriers';
import { IllegalStateError, InvalidArgumentError, ZkClient } from '../../../src';
import { FaultProxy } from '../../../src/testing';
import { StateRecorder, childrenOf, eventually, isWatching, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';

const QTY = 5;

describe('DistributedDoubleBarrier', () => {
  const zk = useZooKeeper();
  let path: string;

  beforeEach(() => {
    path = `${randomRoot('double')}/barrier`;
  });

  const connect = (connectString = zk.server.connectString) => zk.clients.connect({ connectString });

  /** Every member enters, checks that all are inside, then leaves; records the most inside at once. */
  const runRound = async (barriers: DistributedDoubleBarrier[]) => {
    let inside = 0;
    let most = 0;
    let entered = 0;
    let allIn!: () => void;
    const everyoneEntered = new Promise<void>((r) => (allIn = r));
    await Promise.all(
      barriers.map(async (barrier) => {
        await barrier.enter({ timeoutMs: timing(20_000) });
        inside++;
        most = Math.max(most, inside);
        if (++entered === barriers.length) allIn();
        await everyoneEntered;
        await barrier.leave({ timeoutMs: timing(20_000) });
        inside--;
      }),
    );
    return { most, inside };
  };

  // Curator's testBasic: members on one client.
  it('lets members in only when all have entered, and out only when all have left', async () => {
    const client = await connect();
    const barriers = Array.from({ length: QTY }, () => new DistributedDoubleBarrier(client, path, QTY));
    const entering = barriers.slice(0, QTY - 1).map((b) => b.enter({ timeoutMs: timing(20_000) }));
    await eventually('four members waiting', async () => (await childrenOf(client, path)).length === QTY - 1);
    // Member nodes: EPHEMERAL <uuid>.
    for (const child of await client.getChildren(path)) {
      expect(child).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect((await client.exists(`${path}/${child}`))?.ephemeralOwner).toBe(client.sessionId);
    }
    expect(barriers.some((b) => b.isEntered)).toBe(false);
    await barriers[QTY - 1].enter({ timeoutMs: timing(20_000) });
    await Promise.all(entering);
    expect((await client.exists(`${path}/ready`))?.ephemeralOwner).toBe(0n);

    // All but the lowest leave: they delete their nodes and wait for the lowest.
    const [lowest, ...others] = [...barriers].sort((a, b) => (a.ourPath < b.ourPath ? -1 : 1));
    const leaving = others.map((b) => b.leave({ timeoutMs: timing(20_000) }));
    await eventually('the others to delete their nodes', async () => (await childrenOf(client, path)).filter((c) => c !== 'ready').length === 1);
    expect(await client.exists(lowest.ourPath)).not.toBeNull();
    await lowest.leave({ timeoutMs: timing(20_000) });
    await Promise.all(leaving);
    expect(await childrenOf(client, path)).toEqual([]);
  });

  // Curator's testMultiClient.
  it('members on their own clients', async () => {
    const cs = await Promise.all(Array.from({ length: QTY }, () => connect()));
    expect(await runRound(cs.map((c) => new DistributedDoubleBarrier(c, path, QTY)))).toEqual({ most: QTY, inside: 0 });
    expect(await childrenOf(cs[0], path)).toEqual([]);
  });

  // Curator's testOverSubscribed: memberQty is a threshold, not a limit.
  it('more members than memberQty all enter and leave', async () => {
    const client = await connect();
    expect(await runRound(Array.from({ length: QTY + 1 }, () => new DistributedDoubleBarrier(client, path, QTY)))).toEqual({ most: QTY + 1, inside: 0 });
  });

  // Curator's testSpuriousWakeup (GH-1290): a wake-up that is not the barrier opening lets no one in.
  it('a connection blip while waiting to enter does not let the member in', async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const waiterClient = await connect(proxy.connectString);
    const states = new StateRecorder(waiterClient);
    const first = new DistributedDoubleBarrier(waiterClient, path, 2);
    let passed = false;
    const entering = first.enter({ timeoutMs: timing(30_000) }).then(() => (passed = true));
    await eventually('the first member waiting', async () => (await childrenOf(waiterClient, path)).length === 1);
    const mark = states.mark();
    proxy.cut();
    await states.waitFor('SUSPENDED', mark);
    proxy.heal();
    await states.waitFor('RECONNECTED', mark);
    // The watch on `ready` is in place again (the server shows it), and the member has not passed.
    await eventually('the watch on ready', () => isWatching(zk.server, `${path}/ready`, waiterClient.sessionId));
    expect(passed).toBe(false);
    const second = new DistributedDoubleBarrier(await connect(), path, 2);
    await second.enter({ timeoutMs: timing(10_000) });
    await entering;
    expect(passed).toBe(true);
    await Promise.all([first.leave({ timeoutMs: timing(10_000) }), second.leave({ timeoutMs: timing(10_000) })]);
  });

  it('an enter that runs out of time rejects with BarrierTimeoutError and leaves no member node', async () => {
    const client = await connect();
    const barrier = new DistributedDoubleBarrier(client, path, 2);
    const startedAt = Date.now();
    await expect(barrier.enter({ timeoutMs: 400 })).rejects.toThrow(BarrierTimeoutError);
    expect(Date.now() - startedAt).toBeLessThan(timing(1_500));
    // A create still in flight at the deadline lands late, and the client deletes that node in
    // the background: the listing waits for that delete, not for the create.
    await eventually('no member node, and no delete pending', async () => client.pendingBackgroundDeletes === 0 && (await childrenOf(client, path)).length === 0);
    // It can try again.
    const other = new DistributedDoubleBarrier(client, path, 2);
    await Promise.all([barrier.enter({ timeoutMs: timing(10_000) }), other.enter({ timeoutMs: timing(10_000) })]);
    // A leave that runs out of time leaves the member inside, to leave again.
    const lowest = [barrier, other].sort((a, b) => (a.ourPath < b.ourPath ? -1 : 1));
    await expect(lowest[0].leave({ timeoutMs: 300 })).rejects.toThrow(BarrierTimeoutError);
    expect(lowest[0].isEntered).toBe(true);
    await Promise.all([lowest[0].leave({ timeoutMs: timing(10_000) }), lowest[1].leave({ timeoutMs: timing(10_000) })]);
    expect(await childrenOf(client, path)).toEqual([]);
  });

  it('refuses misuse and bad input', async () => {
    const unstarted = new ZkClient({ connectString: zk.server.connectString });
    expect(() => new DistributedDoubleBarrier(unstarted, path, 0)).toThrow(InvalidArgumentError);
    expect(() => new DistributedDoubleBarrier(unstarted, 'x', 1)).toThrow(InvalidArgumentError);
    const idle = new DistributedDoubleBarrier(unstarted, path, 1);
    await expect(idle.leave()).rejects.toThrow(IllegalStateError);
    await expect(idle.enter({ timeoutMs: NaN })).rejects.toThrow(InvalidArgumentError);
    await unstarted.close();
    const client = await connect();
    const barrier = new DistributedDoubleBarrier(client, path, 1);
    await barrier.enter();
    await expect(barrier.enter()).rejects.toThrow(IllegalStateError);
    await barrier.leave();
    await expect(barrier.leave()).rejects.toThrow(IllegalStateError);
  });
});
