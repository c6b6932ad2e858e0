import { InterProcessMutex, LockLostError, LockTimeoutError } from '../../../recipes/locks';
import { FaultProxy, expireSession } from '../../../src/testing';
import type { RetryPolicy } from '../../../src/retry';
import { deferred } from '../../../src/util/async';
import { StateRecorder, aborted, childrenOf, eventually, randomRoot, timing, watchNode } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { InstrumentedTransports } from '../../instrumentedTransports';

describe('InterProcessMutex under faults', () => {
  let path: string;

  const zk = useZooKeeper();
  beforeEach(() => {
    path = `${randomRoot('faults')}/lock`;
  });

  it("the holder's session expires: its signal aborts with LOST, and the next waiter acquires", async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const holderClient = await zk.clients.connect({ connectString: proxy.connectString, connectionStateErrorPolicy: 'session' });
    const waiterClient = await zk.clients.connect({ connectString: zk.server.connectString });
    const lease = await new InterProcessMutex(holderClient, path).acquire();
    const lost = aborted(lease.signal);
    const next = new InterProcessMutex(waiterClient, path).acquire({ timeoutMs: timing(30_000) });
    await eventually('the waiter queued', async () => (await childrenOf(waiterClient, path)).length === 2);

    // Expired with the holder cut off: a holder that attached to its session again while it was
    // being closed would hear its own node's deletion (NODE_DELETED) before the expiry. It hears
    // of the expiry when it reconnects.
    proxy.cut();
    await expireSession(holderClient, { connectString: zk.server.connectString });
    proxy.heal();
    const reason = await lost;
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('LOST');
    const nextLease = await next;
    expect(nextLease.fencingToken).toBeGreaterThan(lease.fencingToken);
    // The old holder's release is harmless: its node is long gone.
    await lease.release();
    await nextLease.release();
  });

  it('under the standard policy the signal aborts on SUSPENDED, before anyone else can hold the lock', async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    // The guarantee needs the client to notice the silence (after 2/3 of the session timeout)
    // before the server expires the session: 4 s leaves a margin even on a loaded machine.
    const holderClient = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 4_000 });
    const waiterClient = await zk.clients.connect({ connectString: zk.server.connectString });
    const lease = await new InterProcessMutex(holderClient, path).acquire();
    let lostAt = 0;
    lease.signal.addEventListener('abort', () => (lostAt = Date.now()));
    const lost = aborted(lease.signal);
    let acquiredAt = 0;
    const next = new InterProcessMutex(waiterClient, path).acquire({ timeoutMs: timing(30_000) }).then((l) => {
      acquiredAt = Date.now();
      return l;
    });
    await eventually('the waiter queued', async () => (await childrenOf(waiterClient, path)).length === 2);

    proxy.blackhole();
    const reason = (await lost) as LockLostError;
    expect(reason.reason).toBe('SUSPENDED');
    // The waiter gets the lock only once the server expires the partitioned session.
    const nextLease = await next;
    expect(acquiredAt).toBeGreaterThan(lostAt);
    proxy.heal();
    await lease.release();
    await nextLease.release();
  });

  it('a server restart keeps held and waiting locks in order', async () => {
    const a = await zk.clients.connect({ connectString: zk.server.connectString, connectionStateErrorPolicy: 'session' });
    const b = await zk.clients.connect({ connectString: zk.server.connectString });
    const c = await zk.clients.connect({ connectString: zk.server.connectString });
    const states = new StateRecorder(a);
    const lease = await new InterProcessMutex(a, path).acquire();
    const order: string[] = [];
    const waitB = new InterProcessMutex(b, path).acquire({ timeoutMs: timing(60_000) }).then(async (l) => {
      order.push('b');
      await l.release();
    });
    await eventually('b queued', async () => (await childrenOf(a, path)).length === 2);
    const waitC = new InterProcessMutex(c, path).acquire({ timeoutMs: timing(60_000) }).then(async (l) => {
      order.push('c');
      await l.release();
    });
    await eventually('c queued', async () => (await childrenOf(a, path)).length === 3);

    const mark = states.mark();
    await zk.server.restart();
    await states.waitFor('RECONNECTED', mark);
    // Under the session policy a reconnect with the same session keeps the lock.
    expect(lease.signal.aborted).toBe(false);
    expect(await childrenOf(a, path)).toHaveLength(3);
    expect(order).toEqual([]);
    await lease.release();
    await Promise.all([waitB, waitC]);
    expect(order).toEqual(['b', 'c']);
  });

  it('a partition during acquire: the abandoned node is deleted once the partition heals', async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const holder = await zk.clients.connect({ connectString: zk.server.connectString });
    const partitioned = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 30_000, connectionTimeoutMs: 300 });
    const lease = await new InterProcessMutex(holder, path).acquire();
    // Abort rather than time out, so the attempt gives up only once the partition is in place.
    const giveUp = new AbortController();
    const pending = new InterProcessMutex(partitioned, path).acquire({ signal: giveUp.signal });
    await eventually('the partitioned waiter queued', async () => (await childrenOf(holder, path)).length === 2);
    const [, waiterNode] = (await childrenOf(holder, path)).sort((x, y) => x.slice(-10).localeCompare(y.slice(-10)));
    const gone = await watchNode(holder, `${path}/${waiterNode}`);

    proxy.cut();
    giveUp.abort(new LockTimeoutError('gave up during the partition'));
    await expect(pending).rejects.toBeInstanceOf(LockTimeoutError);
    // The session lives on (30 s), so only the client's own delete can remove the node.
    expect(await childrenOf(holder, path)).toHaveLength(2);
    proxy.heal();
    expect(await gone.next).toBe('deleted');
    expect(await childrenOf(holder, path)).toHaveLength(1);
    await lease.release();
  });

  it("a waiter whose session expires starts again with a new node, and still gets the lock", async () => {
    const holder = await zk.clients.connect({ connectString: zk.server.connectString });
    const waiterClient = await zk.clients.connect({ connectString: zk.server.connectString });
    const lease = await new InterProcessMutex(holder, path).acquire();
    const pending = new InterProcessMutex(waiterClient, path).acquire({ timeoutMs: timing(30_000) });
    await eventually('the waiter queued', async () => (await childrenOf(holder, path)).length === 2);
    const [firstWaiterNode] = (await childrenOf(holder, path)).filter((n) => !lease.node.endsWith(n));

    await expireSession(waiterClient);
    await eventually('a new waiter node', async () => {
      const now = await childrenOf(holder, path);
      return now.length === 2 && !now.includes(firstWaiterNode);
    });
    await lease.release();
    const won = await pending;
    expect(won.node.endsWith(firstWaiterNode)).toBe(false);
    expect((await holder.exists(won.node))?.ephemeralOwner).toBe(waiterClient.sessionId);
    await won.release();
  });

  it('a waiter whose watch is retried after its session expired does not trust it: it starts again in the new session', async () => {
    // The race: the read that sets the waiter's watch fails with a connection loss, the session
    // expires while the client waits to retry, and the retry would set the watch in the new
    // session, on behalf of a node that went with the old one.
    const traced = new InstrumentedTransports();
    const retryAsked = deferred<void>();
    const retryPolicy: RetryPolicy = {
      allowRetry: (retries) => {
        retryAsked.resolve();
        return retries === 0 ? timing(2_000) : retries < 20 ? 100 : false;
      },
    };
    const holder = await zk.clients.connect({ connectString: zk.server.connectString });
    const waiterClient = await zk.clients.connect({ connectString: zk.server.connectString, transportFactory: traced.factory, retryPolicy });
    const lease = await new InterProcessMutex(holder, path).acquire();
    const { failed } = traced.failNext('getData', lease.node);
    const pending = new InterProcessMutex(waiterClient, path).acquire({ timeoutMs: timing(30_000) });
    await failed;
    await retryAsked.promise;
    const [firstWaiterNode] = (await childrenOf(holder, path)).filter((n) => !lease.node.endsWith(n));

    await expireSession(waiterClient);
    const newWaiterNode = await eventually('a new waiter node', async () => {
      const now = await childrenOf(holder, path);
      return now.length === 2 && !now.includes(firstWaiterNode) && now.find((n) => !lease.node.endsWith(n));
    });
    expect((await holder.exists(`${path}/${newWaiterNode}`))?.ephemeralOwner).toBe(waiterClient.sessionId);
    await lease.release();
    const won = await pending;
    expect(won.node).toBe(`${path}/${newWaiterNode}`);
    expect((await holder.exists(won.node))?.ephemeralOwner).toBe(waiterClient.sessionId);
    await won.release();
  });

  it('fencing tokens still rise when the container parent is reaped and re-created', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const mutex = new InterProcessMutex(client, path);
    const first = await mutex.acquire();
    const reaped = await watchNode(client, path);
    await first.release();
    expect(await reaped.next).toBe('deleted');
    const second = await mutex.acquire();
    // The new parent restarts its counter, and the token still goes up.
    expect(second.node.endsWith('lock-0000000000')).toBe(true);
    expect(first.node.endsWith('lock-0000000000')).toBe(true);
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    await second.release();
  });

  it('a lock node deleted by someone else aborts the signal with NODE_DELETED', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const other = await zk.clients.connect({ connectString: zk.server.connectString });
    const lease = await new InterProcessMutex(client, path).acquire();
    // Asking for the signal starts the watch; whether the delete lands before or after it is
    // set, the loss is reported.
    const signal = lease.signal;
    await other.delete(lease.node);
    const reason = (await aborted(signal)) as LockLostError;
    expect(reason.reason).toBe('NODE_DELETED');
    await lease.release();
  });
});
