import { InterProcessMultiLock, InterProcessMutex, InterProcessSemaphoreMutex, LockTimeoutError, type MultiLease } from '../../../recipes/locks';
import { aborted, childrenOf, eventually, randomRoot, timing, watchNode } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { describeLockContract } from './lockContract';

// Two InterProcessMutexes, which are re-entrant per async context: so is the multi-lock.
describeLockContract('InterProcessMultiLock', {
  make: (client, path) => new InterProcessMultiLock(client, [`${path}/a`, `${path}/b`]),
  reentrant: 'scope',
  nodes: async (client, path) => [
    ...(await childrenOf(client, `${path}/a`)).map((c) => `a/${c}`),
    ...(await childrenOf(client, `${path}/b`)).map((c) => `b/${c}`),
  ],
});

describe('InterProcessMultiLock: order and rollback', () => {
  let root: string;

  const zk = useZooKeeper();
  beforeEach(() => {
    root = randomRoot('multi');
  });

  const connect = () => zk.clients.connect({ connectString: zk.server.connectString });

  it('gives back the locks it holds, at once, when a later one times out', async () => {
    const [a, b, c] = await Promise.all([connect(), connect(), connect()]);
    const second = await new InterProcessMutex(b, `${root}/2`).acquire();
    const multi = new InterProcessMultiLock(a, [`${root}/1`, `${root}/2`]);
    // Time enough to win lock 1 and wait on lock 2, however slow the machine: a deadline that fell
    // while a create was still in flight would leave that node to a delete in the background.
    await expect(multi.acquire({ timeoutMs: timing(1_500) })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(multi.isAcquiredInThisProcess()).toBe(false);
    // The first lock is free the moment acquire rejects.
    const first = await new InterProcessMutex(c, `${root}/1`).tryAcquire({ timeoutMs: timing(10_000) });
    expect(first).toBeDefined();
    expect(await childrenOf(a, `${root}/2`)).toEqual([second.node.split('/').pop()]);
    await first?.release();

    // tryAcquire gives back too, and so does an abort.
    expect(await multi.tryAcquire({ timeoutMs: timing(10_000) })).toBeUndefined();
    expect(await childrenOf(a, `${root}/1`)).toEqual([]);
    const controller = new AbortController();
    const pending = multi.acquire({ signal: controller.signal });
    // Abort once it holds the first lock and waits for the second.
    await eventually('the multi-lock to wait on lock 2', async () => (await childrenOf(a, `${root}/2`)).length === 2);
    expect(await childrenOf(a, `${root}/1`)).toHaveLength(1);
    const reason = new Error('enough');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(await childrenOf(a, `${root}/1`)).toEqual([]);
    await second.release();
  });

  it('releases in reverse order, and its signal aborts when any lease is lost', async () => {
    const a = await connect();
    const b = await connect();
    const multi = new InterProcessMultiLock(a, [`${root}/1`, `${root}/2`, `${root}/3`]);
    const lease = (await multi.acquire({ timeoutMs: timing(10_000) })) as MultiLease;
    expect(lease.leases.map((l) => l.node.slice(root.length + 1, root.length + 2))).toEqual(['1', '2', '3']);
    expect(lease.node).toBe(lease.leases[0].node);
    expect(lease.fencingToken).toBe(lease.leases.reduce((m, l) => (l.fencingToken > m ? l.fencingToken : m), 0n));

    // Deletions reach one session's watches in the order the server made them.
    const deleted: number[] = [];
    const watched = await Promise.all(lease.leases.map((l) => watchNode(b, l.node)));
    const seen = watched.map((w, i) => w.next.then(() => deleted.push(i + 1)));
    await lease.release();
    await Promise.all(seen);
    expect(deleted).toEqual([3, 2, 1]);
    expect(lease.released).toBe(true);

    // Mixed locks; the combined signal follows any one of them.
    const mixed = new InterProcessMultiLock([new InterProcessSemaphoreMutex(a, `${root}/s`), new InterProcessMutex(a, `${root}/m`)]);
    const held = await mixed.acquire();
    expect(held.signal.aborted).toBe(false);
    const lost = aborted(held.signal);
    // Someone deletes the semaphore-mutex's lease node: that lock can no longer be trusted.
    await b.delete(held.leases[0].node);
    expect(await lost).toMatchObject({ name: 'LockLostError', reason: 'NODE_DELETED' });
    await mixed.release();
    expect(mixed.isAcquiredInThisProcess()).toBe(false);
  });
});
