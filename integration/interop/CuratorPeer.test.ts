import type { ZkClient } from '../../src';
import { TestingServer } from '../../src/testing';
import { Clients, childrenOf, eventually, nextEvent, protectedSequential, randomRoot, timing } from '../helpers';
import { CuratorPeer, CuratorPeerError } from './CuratorPeer';

describe('CuratorPeer: Apache Curator 5.x in a child JVM', () => {
  let server: TestingServer;
  let a: CuratorPeer;
  let b: CuratorPeer;
  let zk: ZkClient;
  const clients = new Clients();

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    [a, b] = await Promise.all([
      CuratorPeer.start(server.connectString, { label: 'peer-a' }),
      CuratorPeer.start(server.connectString, { label: 'peer-b' }),
    ]);
    zk = await clients.connect({ connectString: server.connectString });
  });
  afterAll(async () => {
    await clients.closeAll();
    await Promise.all([a?.close(), b?.close()]);
    await server?.close();
  });

  it('answers ping, and rejects unknown commands and misuse with the Java error', async () => {
    expect(await a.request('ping')).toMatchObject({ ok: true, pong: true });
    await expect(a.request('nope')).rejects.toThrow(/unknown command nope/);
    await expect(a.request('latch.new', { name: 'x', path: '/x', id: 'p' })).rejects.toThrow(/participantId/);
    const err = await a.request('mutex.acquire', { name: 'missing' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CuratorPeerError);
    expect((err as CuratorPeerError).javaError).toMatch(/IllegalStateException: no object named "missing"/);
  });

  it('two peers contend for an InterProcessMutex; the lock nodes are protected and sequential', async () => {
    const path = `${randomRoot('interop')}/mutex`;
    await a.request('mutex.new', { name: 'm1', path });
    await b.request('mutex.new', { name: 'm1', path });

    expect(await a.request('mutex.acquire', { name: 'm1', timeoutMs: timing(10_000) })).toMatchObject({ acquired: true });
    const [holder] = await zk.getChildren(path);
    expect(holder).toMatch(protectedSequential('lock-'));
    expect((await a.request<{ participants: string[] }>('mutex.participants', { name: 'm1' })).participants).toEqual([`${path}/${holder}`]);

    // B times out while A holds the lock, and removes its own node on the way out.
    expect(await b.request('mutex.acquire', { name: 'm1', timeoutMs: 500 })).toMatchObject({ acquired: false });
    expect(await zk.getChildren(path)).toEqual([holder]);

    // B waits; A's release wakes it.
    const waiting = b.request('mutex.acquire', { name: 'm1', timeoutMs: timing(20_000) });
    const queued = await eventually('B to queue behind A', async () => {
      const children = await zk.getChildren(path);
      return children.length === 2 ? children : undefined;
    });
    for (const child of queued) expect(child).toMatch(protectedSequential('lock-'));
    await a.request('mutex.release', { name: 'm1' });
    expect(await waiting).toMatchObject({ acquired: true });
    expect(await zk.getChildren(path)).toEqual(queued.filter((c) => c !== holder));

    // Curator's mutex belongs to the thread that acquired it: the peer runs every command on one
    // name on the same thread, so B's release works and A's (it no longer holds it) fails.
    await expect(a.request('mutex.release', { name: 'm1' })).rejects.toThrow(/IllegalMonitorStateException/);
    await b.request('mutex.release', { name: 'm1' });
    expect(await childrenOf(zk, path)).toEqual([]);
  });

  it('a LeaderLatch between two peers elects exactly one leader, and the other takes over when it leaves', async () => {
    const path = `${randomRoot('interop')}/latch`;
    await a.request('latch.new', { name: 'l1', path, participantId: 'peer-a' });
    await b.request('latch.new', { name: 'l1', path, participantId: 'peer-b' });
    await Promise.all([a.request('latch.start', { name: 'l1' }), b.request('latch.start', { name: 'l1' })]);

    // The loser's waiter is aborted, or it would take the isLeader event that comes later.
    const race = new AbortController();
    const leader = await Promise.race(
      [a, b].map((p) => p.waitForEvent({ event: 'isLeader', name: 'l1' }, { signal: race.signal }).then(() => p)),
    );
    race.abort();
    const follower = leader === a ? b : a;
    const flags = await Promise.all([a, b].map((p) => p.request<{ leader: boolean }>('latch.hasLeadership', { name: 'l1' })));
    expect(flags.map((f) => f.leader).filter(Boolean)).toHaveLength(1);
    expect((await leader.request('latch.hasLeadership', { name: 'l1' })).leader).toBe(true);

    // Curator's start() creates the latch's node in the background: the second may come after
    // the first has already won.
    let children: string[] = [];
    await eventually('both latch nodes', async () => (children = await zk.getChildren(path)).length === 2);
    for (const child of children) expect(child).toMatch(protectedSequential('latch-'));
    const ids = await Promise.all(children.map(async (c) => (await zk.getData(`${path}/${c}`)).data.toString('utf8')));
    expect(ids.sort()).toEqual(['peer-a', 'peer-b']);
    const leaderId = leader === a ? 'peer-a' : 'peer-b';
    expect(await follower.request('latch.leader', { name: 'l1' })).toMatchObject({ leaderId, isLeader: true });

    await leader.request('latch.close', { name: 'l1' });
    await follower.waitForEvent({ event: 'isLeader', name: 'l1' });
    expect((await follower.request('latch.hasLeadership', { name: 'l1' })).leader).toBe(true);
    await follower.request('latch.close', { name: 'l1' });
  });

  it('a DistributedQueue round trip: a put by one peer is consumed by the other', async () => {
    const path = `${randomRoot('interop')}/queue`;
    await a.request('queue.new', { name: 'q1', path, consume: false });
    await a.request('queue.start', { name: 'q1' });
    await a.request('queue.put', { name: 'q1', value: 'héllo' });

    // Before anyone consumes: one persistent sequential item in Curator's item format.
    const [item] = await zk.getChildren(path);
    expect(item).toMatch(/^queue-\d{10}$/);
    const payload = Buffer.from('héllo', 'utf8');
    const expected = Buffer.concat([Buffer.from([0, 1, 0, 1, 1]), Buffer.from([0, 0, 0, payload.length]), payload, Buffer.from([2])]);
    expect((await zk.getData(`${path}/${item}`)).data).toEqual(expected);

    await b.request('queue.new', { name: 'q1', path });
    await b.request('queue.start', { name: 'q1' });
    expect(await b.waitForEvent({ event: 'item', name: 'q1' })).toMatchObject({ value: 'héllo' });
    await a.request('queue.put', { name: 'q1', value: 'second' });
    expect(await b.waitForEvent({ event: 'item', name: 'q1' })).toMatchObject({ value: 'second' });
    await eventually('consumed items to be deleted', async () => (await childrenOf(zk, path)).length === 0);
    await Promise.all([a.request('queue.close', { name: 'q1' }), b.request('queue.close', { name: 'q1' })]);
  });

  it('a SimpleDistributedQueue: offer on one peer, take on the other; take times out on an empty queue', async () => {
    const path = `${randomRoot('interop')}/squeue`;
    await a.request('squeue.new', { name: 's1', path });
    await b.request('squeue.new', { name: 's1', path });
    expect(await a.request('squeue.offer', { name: 's1', value: 'one' })).toMatchObject({ offered: true });
    expect(await zk.getChildren(path)).toEqual([expect.stringMatching(/^qn-\d{10}$/)]);
    expect(await b.request('squeue.take', { name: 's1', timeoutMs: timing(10_000) })).toMatchObject({ value: 'one' });
    expect(await b.request('squeue.take', { name: 's1', timeoutMs: 200 })).toMatchObject({ value: null });
  });

  it('a LeaderSelector holds leadership until released, then the other peer takes it', async () => {
    const path = `${randomRoot('interop')}/selector`;
    await a.request('selector.new', { name: 'sel', path, participantId: 'peer-a' });
    await a.request('selector.start', { name: 'sel' });
    await a.waitForEvent({ event: 'takeLeadership', name: 'sel' });
    await b.request('selector.new', { name: 'sel', path, participantId: 'peer-b' });
    await b.request('selector.start', { name: 'sel' });
    await eventually('B to queue', async () => (await zk.getChildren(path)).length === 2);
    expect(await b.request('selector.hasLeadership', { name: 'sel' })).toMatchObject({ leader: false });

    expect(await a.request('selector.release', { name: 'sel' })).toMatchObject({ released: true });
    expect(await a.waitForEvent({ event: 'leadershipEnded', name: 'sel' })).toMatchObject({ interrupted: false });
    await b.waitForEvent({ event: 'takeLeadership', name: 'sel' });
    await b.request('selector.release', { name: 'sel' });
    await b.waitForEvent({ event: 'leadershipEnded', name: 'sel' });
    await Promise.all([a.request('selector.close', { name: 'sel' }), b.request('selector.close', { name: 'sel' })]);
    // leadershipEnded comes as takeLeadership returns, before Curator deletes its lock node; a
    // close() at that moment interrupts the delete, which Curator retries ("guaranteed") in the
    // background. Either way no node is left behind while the sessions live.
    await eventually('the selector nodes to be deleted', async () => (await childrenOf(zk, path)).length === 0);
  });

  it('read/write locks and semaphores', async () => {
    const root = randomRoot('interop');
    await a.request('rwlock.new', { name: 'rw', path: `${root}/rw` });
    await b.request('rwlock.new', { name: 'rw', path: `${root}/rw` });
    expect(await a.request('rwlock.acquireRead', { name: 'rw', timeoutMs: timing(5_000) })).toMatchObject({ acquired: true });
    expect(await b.request('rwlock.acquireRead', { name: 'rw', timeoutMs: timing(5_000) })).toMatchObject({ acquired: true });
    expect(await b.request('rwlock.acquireWrite', { name: 'rw', timeoutMs: 300 })).toMatchObject({ acquired: false });
    const children = await zk.getChildren(`${root}/rw`);
    expect(children).toHaveLength(2);
    for (const c of children) expect(c).toMatch(protectedSequential('__READ__'));
    await a.request('rwlock.releaseRead', { name: 'rw' });
    await b.request('rwlock.releaseRead', { name: 'rw' });

    await a.request('semaphore.new', { name: 'sem', path: `${root}/sem`, maxLeases: 2 });
    await b.request('semaphore.new', { name: 'sem', path: `${root}/sem`, maxLeases: 2 });
    expect(await a.request('semaphore.acquire', { name: 'sem', qty: 2, timeoutMs: timing(5_000) })).toMatchObject({ acquired: true, leases: 2 });
    expect(await b.request('semaphore.acquire', { name: 'sem', qty: 1, timeoutMs: 300 })).toMatchObject({ acquired: false, leases: 0 });
    const leases = await zk.getChildren(`${root}/sem/leases`);
    expect(leases).toHaveLength(2);
    for (const c of leases) expect(c).toMatch(protectedSequential('lease-'));
    expect(await a.request('semaphore.releaseAll', { name: 'sem' })).toMatchObject({ released: 2, leases: 0 });
    expect(await b.request('semaphore.acquire', { name: 'sem', qty: 1, timeoutMs: timing(5_000) })).toMatchObject({ acquired: true, leases: 1 });
    await b.request('semaphore.releaseAll', { name: 'sem' });
  });

  it('bench.mutexLoop reports latency percentiles', async () => {
    const reply = await a.request<{ count: number; p50Us: number; p99Us: number; totalMs: number }>('bench.mutexLoop', {
      path: `${randomRoot('interop')}/bench`,
      iterations: 50,
    });
    expect(reply.count).toBe(50);
    expect(reply.p50Us).toBeGreaterThan(0);
    expect(reply.p99Us).toBeGreaterThanOrEqual(reply.p50Us);
    expect(reply.totalMs).toBeGreaterThan(0);
  });

  it('expireSession() expires a Java client session on the server (the peer frozen meanwhile): Curator reports LOST and its latch node goes', async () => {
    const path = `${randomRoot('interop')}/expire`;
    await using c = await CuratorPeer.start(server.connectString, { label: 'peer-c' });
    await c.request('latch.new', { name: 'l', path, participantId: 'java-c' });
    await c.request('latch.start', { name: 'l' });
    await c.waitForEvent({ event: 'isLeader', name: 'l' }, { timeoutMs: timing(20_000) });
    const [node] = await zk.getChildren(path);
    let watched: (type: string) => void = () => undefined;
    const gone = nextEvent<string>((done) => (watched = done), 'the latch node to go');
    expect(await zk.exists(`${path}/${node}`, { watcher: (e) => watched(e.type) })).not.toBeNull();
    await c.expireSession();
    expect(await gone).toBe('deleted');
    await c.waitForEvent({ event: 'state', state: 'LOST' }, { timeoutMs: timing(20_000) });
  });

  it('session.injectExpiration makes Curator report LOST and open a new session', async () => {
    await using c = await CuratorPeer.start(server.connectString, { label: 'peer-e' });
    const before = (await c.sessionCredentials()).sessionId;
    const mark = c.mark();
    await c.request('session.injectExpiration');
    await c.waitForEvent({ event: 'state', state: 'LOST' }, { since: mark });
    await c.waitForEvent({ event: 'state', state: 'RECONNECTED' }, { since: mark });
    expect((await c.sessionCredentials()).sessionId).not.toBe(before);
  });

  it('close() ends the session at once, and a request after exit rejects with the exit', async () => {
    const c = await CuratorPeer.start(server.connectString, { label: 'peer-c' });
    const path = `${randomRoot('interop')}/mutex`;
    await c.request('mutex.new', { name: 'm', path });
    await c.request('mutex.acquire', { name: 'm', timeoutMs: timing(5_000) });
    expect(await zk.getChildren(path)).toHaveLength(1);
    await c.close();
    expect(c.isRunning).toBe(false);
    await expect(c.request('ping')).rejects.toThrow(/exited/);
    // The peer closed its client, so its ephemeral lock node is gone without waiting for a timeout.
    expect(await childrenOf(zk, path)).toEqual([]);
  });

  it('a killed peer rejects pending requests with an error naming the exit', async () => {
    const c = await CuratorPeer.start(server.connectString, { label: 'peer-d' });
    const path = `${randomRoot('interop')}/squeue`;
    await c.request('squeue.new', { name: 's', path });
    const blocked = c.request('squeue.take', { name: 's' });
    c.killNow();
    await expect(blocked).rejects.toThrow(/peer-d \(pid \d+\) exited \(.*SIGKILL\)/);
    await c.close();
  });
});
