import { LeaderLatch, LeaderLatchClosedError, LeaderTimeoutError } from '../../../recipes/leader';
import { sequenceOf, sortLockNodes } from '../../../recipes/locks';
import { once } from 'node:events';
import { InvalidArgumentError, MAX_DATA_BYTES, TimeoutError, type ZkClient } from '../../../src';
import { expireSession } from '../../../src/testing';
import { Clients, StateRecorder, childrenOf, eventually, randomRoot, timing, watchNode } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { InstrumentedTransports } from '../../instrumentedTransports';
import { LeadershipLog } from './leaderHelpers';

const LATCH_NODE = /\/_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-latch-\d{10}$/;

/** Starts latches one after the other, each once the previous one has its node, so the order is known. */
async function startInOrder(latches: LeaderLatch[]): Promise<void> {
  for (const latch of latches) {
    latch.start();
    await eventually('the latch to have its node', () => latch.ourPath !== undefined);
  }
}

describe('LeaderLatch', () => {
  let path: string;
  const latches: LeaderLatch[] = [];
  const zk = useZooKeeper({ beforeClose: () => Promise.all(latches.splice(0).map((l) => l.close())) });
  /** A proxy closed after the latches and clients of the test, so that they can still clean up through it. */
  const proxy = () => zk.startProxy();

  const connect = (extra: Partial<Parameters<Clients['connect']>[0]> = {}): Promise<ZkClient> =>
    zk.clients.connect({ connectString: zk.server.connectString, ...extra });
  const latch = (client: ZkClient, id: string, options: ConstructorParameters<typeof LeaderLatch>[2] = {}): LeaderLatch => {
    // notifyLeader, so that a LeadershipLog sees every leadership end.
    const l = new LeaderLatch(client, path, { id, closeMode: 'notifyLeader', ...options });
    latches.push(l);
    return l;
  };

  beforeEach(() => {
    path = `${randomRoot('latch')}/leader`;
  });

  it("writes Curator's layout: a protected EPHEMERAL_SEQUENTIAL latch- node holding the id; reports leader and participants", async () => {
    const client = await connect();
    const a = latch(client, 'node-a');
    a.start();
    await a.await({ timeoutMs: timing(10_000) });
    expect(a.hasLeadership).toBe(true);
    expect(a.ourPath).toMatch(LATCH_NODE);
    const { data, stat } = await client.getData(a.ourPath as string);
    expect(data.toString('utf8')).toBe('node-a');
    expect(stat.ephemeralOwner).toBe(client.sessionId);

    const b = latch(client, 'node-b');
    await startInOrder([b]);
    expect(await a.getLeader()).toEqual({ id: 'node-a', isLeader: true });
    expect(await b.getParticipants()).toEqual([
      { id: 'node-a', isLeader: true },
      { id: 'node-b', isLeader: false },
    ]);
    expect(b.hasLeadership).toBe(false);
    await a.close();
    await b.close();
    expect(await b.getLeader()).toEqual({ id: '', isLeader: false });
  });

  it('basic succession: leadership passes in start order, one leader at a time', async () => {
    const client = await connect();
    const log = new LeadershipLog();
    const all = ['l0', 'l1', 'l2', 'l3'].map((id) => latch(client, id));
    all.forEach((l, i) => log.trackLatch(`l${i}`, l));
    await startInOrder(all);
    await log.next('l0', 'isLeader');
    for (let i = 0; i < all.length - 1; i++) {
      const mark = log.mark();
      await all[i].close();
      await log.next(`l${i + 1}`, 'isLeader', mark);
      expect(all.filter((l) => l.hasLeadership)).toEqual([all[i + 1]]);
    }
    expect(log.events.filter((e) => e.type === 'isLeader').map((e) => e.who)).toEqual(['l0', 'l1', 'l2', 'l3']);
    expect(log.overlaps()).toEqual([]);
  });

  it('closing a middle participant promotes nobody; the follower behind it lists again and keeps its place (CURATOR-644/645)', async () => {
    const traced = new InstrumentedTransports();
    const first = await connect();
    const third = await connect({ transportFactory: traced.factory });
    const [a, b] = [latch(first, 'a'), latch(first, 'b')];
    const c = latch(third, 'c');
    const log = new LeadershipLog();
    log.trackLatch('a', a);
    log.trackLatch('c', c);
    await startInOrder([a, b, c]);
    await log.next('a', 'isLeader');
    const cNode = c.ourPath;

    await b.close();
    // C's predecessor went: C lists again and watches A now.
    await eventually('C to watch A', () => traced.calls.includes(`getData ${a.ourPath}`));
    expect(c.hasLeadership).toBe(false);
    expect(a.hasLeadership).toBe(true);
    expect(c.ourPath).toBe(cNode);
    expect(traced.calls.filter((call) => call.startsWith('create ')).length).toBe(1);

    const mark = log.mark();
    await a.close();
    await log.next('c', 'isLeader', mark);
    expect(c.ourPath).toBe(cNode);
    expect(log.overlaps()).toEqual([]);
  });

  it('the follower right behind the leader takes over without a read', async () => {
    const traced = new InstrumentedTransports();
    const [a, b] = [latch(await connect(), 'a'), latch(await connect({ transportFactory: traced.factory }), 'b')];
    const log = new LeadershipLog();
    log.trackLatch('a', a);
    log.trackLatch('b', b);
    await startInOrder([a, b]);
    await log.next('a', 'isLeader');
    await eventually('B to watch A', () => traced.replies.includes(`getData ${a.ourPath}`));
    const calls = traced.calls.length;

    const mark = log.mark();
    await a.close();
    await log.next('b', 'isLeader', mark);
    // No node created after B's sorts before it, and B's own node is known to be B's and watched
    // since it joined: A's deletion settles it.
    expect(traced.calls.slice(calls)).toEqual([]);
    expect(log.overlaps()).toEqual([]);
  });

  it('a predecessor gone before the follower can watch it: the follower lists again rather than joining again (CURATOR-644)', async () => {
    const traced = new InstrumentedTransports();
    const first = await connect();
    const third = await connect({ transportFactory: traced.factory });
    const [a, b] = [latch(first, 'a'), latch(first, 'b')];
    const c = latch(third, 'c');
    await startInOrder([a, b]);
    await a.await({ timeoutMs: timing(10_000) });

    // C's first listing still shows B; B leaves before C acts on it.
    const bNode = b.ourPath as string;
    const listing = traced.holdNext('getChildren', path);
    c.start();
    await listing.reached;
    await b.close();
    const [cName] = (await childrenOf(first, path)).filter((n) => !a.ourPath?.endsWith(n));
    const cNode = `${path}/${cName}`;
    listing.release();
    await eventually('C to watch A', () => traced.calls.includes(`getData ${a.ourPath}`));
    // It tried B, found it gone, and listed again.
    const tried = traced.calls.indexOf(`getData ${bNode}`);
    expect(tried).toBeGreaterThanOrEqual(0);
    expect(traced.calls.indexOf(`getChildren ${path}`, tried)).toBeGreaterThan(tried);
    expect(c.ourPath).toBe(cNode);
    expect(traced.calls.filter((call) => call.startsWith('create ')).length).toBe(1);
    expect(c.hasLeadership).toBe(false);
    expect(a.hasLeadership).toBe(true);
  });

  it('drops leadership before it watches a predecessor (CURATOR-653)', async () => {
    const faults = await proxy();
    const traced = new InstrumentedTransports();
    const admin = await connect();
    // A persistent parent whose counter is past 0, so that a node can be named to sort before ours.
    await admin.create(`${path}/dummy`, { createParents: 'persistent' });
    await admin.delete(`${path}/dummy`);
    const client = await zk.clients.connect({
      connectString: faults.connectString,
      connectionStateErrorPolicy: 'session',
      transportFactory: traced.factory,
    });
    const states = new StateRecorder(client);
    const l = latch(client, 'l');
    const log = new LeadershipLog();
    log.trackLatch('l', l);
    l.on('notLeader', () => traced.calls.push('notLeader'));
    l.start();
    await log.next('l', 'isLeader');
    const ourNode = l.ourPath as string;
    const ourSequence = sequenceOf(ourNode, 'latch-') as number;
    expect(ourSequence).toBeGreaterThan(0);

    // A node that sorts before ours appears; the latch finds it on its next check.
    const intruder = `${path}/latch-${String(ourSequence - 1).padStart(10, '0')}`;
    await admin.create(intruder, { mode: 'EPHEMERAL', data: 'intruder' });
    let mark = states.mark();
    faults.cut();
    await states.waitFor('SUSPENDED', mark);
    // The 'session' policy keeps leadership while suspended.
    expect(l.hasLeadership).toBe(true);
    mark = states.mark();
    faults.heal();
    await states.waitFor('RECONNECTED', mark);
    await log.next('l', 'notLeader');
    await eventually('the latch to watch the intruder', () => traced.calls.includes(`getData ${intruder}`));
    expect(traced.calls.indexOf('notLeader')).toBeLessThan(traced.calls.indexOf(`getData ${intruder}`));
    expect(await l.getLeader()).toEqual({ id: 'intruder', isLeader: true });

    const again = log.mark();
    await admin.delete(intruder);
    await log.next('l', 'isLeader', again);
    expect(l.ourPath).toBe(ourNode);
  });

  it('the latch path vanishes: every participant joins again with a new node, and one leads (CURATOR-724)', async () => {
    const admin = await connect();
    const [one, two] = [await connect(), await connect()];
    const a = latch(one, 'a');
    const b = latch(two, 'b');
    const log = new LeadershipLog();
    log.trackLatch('a', a);
    log.trackLatch('b', b);
    await startInOrder([a, b]);
    await log.next('a', 'isLeader');
    const before = [a.ourPath, b.ourPath];

    const mark = log.mark();
    await admin.delete(path, { recursive: true, quietly: true });
    await log.next('a', 'notLeader', mark);
    await log.nextLeader(mark);
    // A leader learns that someone else deleted its node only from its watch, so while the path
    // goes, another participant can lead before the old leader hears of it: no overlap check here.
    await eventually(
      'both to have joined again, with one leader',
      async () => (await childrenOf(admin, path)).length === 2 && [a, b].filter((l) => l.hasLeadership).length === 1,
    );
    expect(a.ourPath).not.toBe(before[0]);
    expect(b.ourPath).not.toBe(before[1]);
    const leader = [a, b].find((l) => l.hasLeadership) as LeaderLatch;
    expect(sortLockNodes(await admin.getChildren(path), ['latch-'])[0]).toBe(leader.ourPath?.slice(path.length + 1));
  });

  it("leads only with a node owned by its current session: a node it believes is its own but is another session's is dropped (CURATOR-696)", async () => {
    const traced = new InstrumentedTransports();
    const admin = await connect();
    const client = await connect({ transportFactory: traced.factory });
    // A node that sorts first and looks like a latch node, owned by another session: what a
    // latch sees of its own node from a session that has expired but is not yet purged.
    const stale = await admin.create(`${path}/latch-`, { mode: 'EPHEMERAL_SEQUENTIAL', protected: true, createParents: 'container', data: 'l' });
    const gone = await watchNode(admin, stale);
    traced.answerNextCreate(path, stale);
    const l = latch(client, 'l');
    const leadingWith: Array<string | undefined> = [];
    l.on('isLeader', () => leadingWith.push(l.ourPath));
    l.start();
    // The latch reads the node before leading, sees the owner, deletes the node and joins again.
    expect(await gone.next).toBe('deleted');
    await l.await({ timeoutMs: timing(10_000) });
    expect(leadingWith).toHaveLength(1);
    expect(leadingWith[0]).not.toBe(stale);
    expect((await admin.exists(leadingWith[0] as string))?.ephemeralOwner).toBe(client.sessionId);
  });

  it('a session expiring while the latch joins: a stale listing showing its node first never makes it lead beside the real leader', async () => {
    const traced = new InstrumentedTransports();
    const lClient = await connect({ transportFactory: traced.factory, connectionStateErrorPolicy: 'session' });
    const bClient = await connect();
    const states = new StateRecorder(lClient);
    const l = latch(lClient, 'l');
    const b = latch(bClient, 'b');
    const log = new LeadershipLog();
    log.trackLatch('l', l);
    log.trackLatch('b', b);

    // L's node is created, and the listing that shows it first is held back.
    const listing = traced.holdNext('getChildren', path);
    l.start();
    await listing.reached;
    const [stale] = await childrenOf(bClient, path);
    const gone = await watchNode(bClient, `${path}/${stale}`);
    const mark = states.mark();
    await expireSession(lClient);
    expect(await gone.next).toBe('deleted');
    b.start();
    await log.next('b', 'isLeader');
    await states.waitFor('LOST', mark);

    // The stale listing says L is first. L must check its node, find it gone, and queue behind B.
    listing.release();
    await eventually('L to join again in its new session', async () => {
      const node = l.ourPath;
      if (node === undefined || node.endsWith(stale)) return false;
      const stat = await bClient.exists(node);
      return stat !== null && stat.ephemeralOwner === lClient.sessionId;
    });
    expect(log.events.filter((e) => e.who === 'l')).toEqual([]);
    expect(b.hasLeadership).toBe(true);
    expect(l.hasLeadership).toBe(false);
    expect(await l.getLeader()).toEqual({ id: 'b', isLeader: true });
  });

  it('close() while the create is in flight leaves no node, and never leads', async () => {
    const traced = new InstrumentedTransports();
    const client = await connect({ transportFactory: traced.factory });
    const admin = await connect();
    const l = latch(client, 'l');
    const log = new LeadershipLog();
    log.trackLatch('l', l);
    const listing = traced.holdNext('getChildren', path);
    l.start();
    await listing.reached;
    const [node] = await childrenOf(admin, path);
    expect(node).toBeDefined();
    const gone = await watchNode(admin, `${path}/${node}`);
    await l.close();
    listing.release();
    expect(await gone.next).toBe('deleted');
    expect(await childrenOf(admin, path)).toEqual([]);
    expect(log.events).toEqual([]);
    expect(l.hasLeadership).toBe(false);
  });

  it('a leader whose node someone deletes stops leading at once, and joins again', async () => {
    const client = await connect();
    const admin = await connect();
    const l = latch(client, 'l');
    const log = new LeadershipLog();
    log.trackLatch('l', l);
    l.start();
    await log.next('l', 'isLeader');
    const first = l.ourPath as string;
    const mark = log.mark();
    await admin.delete(first);
    await log.next('l', 'notLeader', mark);
    await log.next('l', 'isLeader', mark);
    expect(l.ourPath).not.toBe(first);
  });

  it('RECONNECTED with the same session keeps the node; after LOST the latch joins with a new node in its new session', async () => {
    const faults = await proxy();
    const client = await zk.clients.connect({ connectString: faults.connectString });
    const states = new StateRecorder(client);
    const l = latch(client, 'l');
    const log = new LeadershipLog();
    log.trackLatch('l', l);
    l.start();
    await log.next('l', 'isLeader');
    const first = l.ourPath;
    const session = client.sessionId;

    let mark = states.mark();
    let events = log.mark();
    faults.cut();
    await states.waitFor('SUSPENDED', mark);
    faults.heal();
    await states.waitFor('RECONNECTED', mark);
    // Standard policy: leadership went on SUSPENDED, and comes back with the same node.
    await log.next('l', 'notLeader', events);
    await log.next('l', 'isLeader', events);
    expect(client.sessionId).toBe(session);
    expect(l.ourPath).toBe(first);

    mark = states.mark();
    events = log.mark();
    await expireSession(client);
    await states.waitFor('LOST', mark);
    await log.next('l', 'notLeader', events);
    // Taking the session over to expire it can first let the client back into the same session,
    // where the latch leads again with its old node, before the server closes it: the next
    // isLeader may be that one. Wait for leadership in the new session instead.
    await eventually('leadership in a new session', () => l.hasLeadership && client.sessionId !== 0n && client.sessionId !== session && l.ourPath !== first);
    expect(l.ourPath).toBeDefined();
    expect((await client.exists(l.ourPath as string))?.ephemeralOwner).toBe(client.sessionId);
  });

  it('await(): resolves at once for a leader; rejects on timeout, when not started or closed, and on abort', async () => {
    const client = await connect();
    const a = latch(client, 'a');
    const b = latch(client, 'b');
    await expect(b.await({ timeoutMs: 0 })).rejects.toMatchObject({ code: 'LATCH_CLOSED', message: expect.stringContaining('not started') });
    await startInOrder([a, b]);
    await a.await();
    await expect(b.await({ timeoutMs: 50 })).rejects.toBeInstanceOf(LeaderTimeoutError);
    await expect(b.await({ timeoutMs: 50 })).rejects.toBeInstanceOf(TimeoutError);
    const aborter = new AbortController();
    const aborted = b.await({ signal: aborter.signal });
    aborter.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    const pending = expect(b.await()).rejects.toBeInstanceOf(LeaderLatchClosedError);
    await b.close();
    await pending;
    await expect(b.await()).rejects.toBeInstanceOf(LeaderLatchClosedError);
  });

  it('a throwing listener does not break the latch or the other listeners', async () => {
    const client = await connect();
    const a = latch(client, 'a');
    const b = latch(client, 'b');
    const heard: string[] = [];
    b.on('isLeader', () => {
      throw new Error('listener bug');
    });
    b.on('isLeader', () => heard.push('isLeader'));
    const removed = () => heard.push('removed');
    b.on('notLeader', removed);
    b.off('notLeader', removed);
    await startInOrder([a, b]);
    await a.close();
    await b.await({ timeoutMs: timing(10_000) });
    expect(heard).toEqual(['isLeader']);
    // A real EventEmitter: events.once works.
    const notLeader = once(b, 'notLeader');
    await b.close();
    await expect(notLeader).resolves.toEqual([]);
  });

  it("close modes: 'silent' says nothing, 'notifyLeader' calls notLeader; close is idempotent", async () => {
    const client = await connect();
    for (const closeMode of ['silent', 'notifyLeader'] as const) {
      const l = latch(client, closeMode, { closeMode });
      const log = new LeadershipLog();
      log.trackLatch('l', l);
      l.start();
      await log.next('l', 'isLeader');
      await Promise.all([l.close(), l.close()]);
      expect(l.hasLeadership).toBe(false);
      expect(log.events.map((e) => e.type)).toEqual(closeMode === 'silent' ? ['isLeader'] : ['isLeader', 'notLeader']);
    }
    expect(await childrenOf(client, path)).toEqual([]);
  });

  it('starting before the server is up works once it comes up', async () => {
    await zk.server.stop();
    const client = zk.clients.create({ connectString: zk.server.connectString });
    client.start();
    const l = latch(client, 'early');
    l.start();
    const leading = l.await({ timeoutMs: timing(60_000) });
    await zk.server.start();
    await leading;
    expect((await client.getData(l.ourPath as string)).data.toString()).toBe('early');
  });

  it('rejects bad arguments and a second start', async () => {
    const client = await connect();
    expect(() => new LeaderLatch(client, 'no-slash')).toThrow(/must start with/);
    expect(() => new LeaderLatch(client, '/')).toThrow(/root/);
    expect(() => new LeaderLatch(client, path, { closeMode: 'loud' as 'silent' })).toThrow(/closeMode/);
    expect(() => new LeaderLatch(client, path, { id: 5 as unknown as string })).toThrow(/id must be a string/);
    // Checked when built, so that a latch never fails to join for it: an id that cannot be written,
    // a client that is not one, a path in ZooKeeper's own subtree.
    expect(() => new LeaderLatch(client, path, { id: 'x'.repeat(MAX_DATA_BYTES + 1) })).toThrow(InvalidArgumentError);
    // Within the data limit, but not with a path this long.
    expect(() => new LeaderLatch(client, `/${'p'.repeat(1_100)}`, { id: 'x'.repeat(MAX_DATA_BYTES) })).toThrow(/request/);
    expect(() => new LeaderLatch(null as unknown as ZkClient, path)).toThrow(InvalidArgumentError);
    expect(() => new LeaderLatch(client, '/zookeeper/latch')).toThrow(/reserved/);
    const l = latch(client, 'x');
    l.start();
    expect(() => l.start()).toThrow(/starts once/);
    await l.close();
  });
});
