import { LeaderSelector, LeadershipInterruptedError, type LeaderSelectorOptions } from '../../../recipes/leader';
import { LockLostError } from '../../../recipes/locks';
import type { ZkClient, ZkClientOptions } from '../../../src';
import { TestingServer, expireSession } from '../../../src/testing';
import { Clients, StateRecorder, aborted, childrenOf, eventually, randomRoot, watchNode } from '../../helpers';
import { InstrumentedTransports } from '../../instrumentedTransports';
import { LeadershipLog } from './leaderHelpers';

const LOCK_NODE = /^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-\d{10}$/;

describe('LeaderSelector', () => {
  let server: TestingServer;
  const clients = new Clients();
  let path: string;
  const selectors: LeaderSelector[] = [];
  let log: LeadershipLog;

  const connect = (extra: Partial<ZkClientOptions> = {}): Promise<ZkClient> => clients.connect({ connectString: server.connectString, ...extra });
  const selector = (client: ZkClient, options: LeaderSelectorOptions): LeaderSelector => {
    const s = new LeaderSelector(client, path, options);
    selectors.push(s);
    return s;
  };
  /** Starts selectors one after the other, each once its node is in line, so the order is known. */
  const startInOrder = async (client: ZkClient, ...all: LeaderSelector[]) => {
    for (const s of all) {
      const before = (await childrenOf(client, path)).length;
      s.start();
      await eventually('the selector to queue', async () => (await childrenOf(client, path)).length > before);
    }
  };

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
  });
  /**
   * Set by a test that kills a connected leader's session from outside: the old leader hears of it
   * only afterwards, as with a deleted node, so its last moment of leadership can overlap the next.
   */
  let killsConnectedLeader = false;
  beforeEach(() => {
    path = `${randomRoot('selector')}/leader`;
    log = new LeadershipLog();
    killsConnectedLeader = false;
  });
  afterEach(async () => {
    await Promise.all(selectors.splice(0).map((s) => s.close()));
    await clients.closeAll();
    if (!killsConnectedLeader) expect(log.overlaps()).toEqual([]);
  });
  afterAll(() => server.close());

  it("is an InterProcessMutex in Curator's layout: lock- nodes holding the id; reports leader and participants", async () => {
    const client = await connect();
    const a = log.selectorTask('a');
    const b = log.selectorTask('b');
    const sa = selector(client, { id: 'sel-a', takeLeadership: a.takeLeadership });
    const sb = selector(client, { id: 'sel-b', takeLeadership: b.takeLeadership });
    await startInOrder(client, sa, sb);
    await log.next('a', 'isLeader');
    expect(sa.hasLeadership).toBe(true);
    expect(sb.hasLeadership).toBe(false);
    const children = await client.getChildren(path);
    expect(children).toHaveLength(2);
    for (const c of children) expect(c).toMatch(LOCK_NODE);
    const ids = await Promise.all(children.map(async (c) => (await client.getData(`${path}/${c}`)).data.toString('utf8')));
    expect(ids.sort()).toEqual(['sel-a', 'sel-b']);
    expect(await sb.getLeader()).toEqual({ id: 'sel-a', isLeader: true });
    expect(await sa.getParticipants()).toEqual([
      { id: 'sel-a', isLeader: true },
      { id: 'sel-b', isLeader: false },
    ]);
    // An empty id writes the client's default data (the local address), as Curator does.
    const anon = selector(client, { takeLeadership: () => undefined });
    await startInOrder(client, anon);
    const [, , third] = await anon.getParticipants();
    expect(third.id).toBe(client.options.defaultData.toString('utf8'));
  });

  it('leadership passes when takeLeadership returns; without autoRequeue a selector stays out until requeue()', async () => {
    const client = await connect();
    const a = log.selectorTask('a');
    const b = log.selectorTask('b');
    const sa = selector(client, { id: 'a', takeLeadership: a.takeLeadership });
    const sb = selector(client, { id: 'b', takeLeadership: b.takeLeadership });
    await startInOrder(client, sa, sb);
    await log.next('a', 'isLeader');
    expect(sa.requeue()).toBe(false); // leading counts as queued

    let mark = log.mark();
    a.release();
    await log.next('b', 'isLeader', mark);
    expect(sa.hasLeadership).toBe(false);
    expect((await sb.getParticipants()).map((p) => p.id)).toEqual(['b']);

    expect(sa.requeue()).toBe(true);
    expect(sa.requeue()).toBe(false);
    await eventually('A to queue again', async () => (await childrenOf(client, path)).length === 2);
    mark = log.mark();
    b.release();
    await log.next('a', 'isLeader', mark);
    expect(log.events.filter((e) => e.type === 'isLeader').map((e) => e.who)).toEqual(['a', 'b', 'a']);
  });

  it('a takeLeadership that throws gives up leadership; with autoRequeue the selector joins again', async () => {
    const client = await connect();
    const b = log.selectorTask('b');
    const h = log.selectorTask('h');
    const calm = log.selectorTask('thrower');
    let calls = 0;
    const thrower = selector(client, {
      id: 'thrower',
      autoRequeue: true,
      takeLeadership: (signal) => {
        // Throws the first time; leads calmly the next.
        if (++calls > 1) return calm.takeLeadership(signal);
        log.record('thrower', 'isLeader');
        log.record('thrower', 'notLeader');
        throw new Error('leader bug');
      },
    });
    const sh = selector(client, { id: 'h', takeLeadership: h.takeLeadership });
    const sb = selector(client, { id: 'b', takeLeadership: b.takeLeadership });
    await startInOrder(client, sh, thrower, sb);
    await log.next('h', 'isLeader');
    h.release();
    await log.next('b', 'isLeader');
    expect(calls).toBe(1);
    // The thrower is back in line behind B.
    await eventually('the thrower to queue again', async () => (await sb.getParticipants()).map((p) => p.id).join() === 'b,thrower');
    const mark = log.mark();
    b.release();
    await log.next('thrower', 'isLeader', mark);
  });

  it('interruptLeadership() without autoRequeue: the signal aborts with INTERRUPTED, the next leads, the interrupted one stays out', async () => {
    const client = await connect();
    const a = log.selectorTask('a');
    const b = log.selectorTask('b');
    const sa = selector(client, { id: 'a', takeLeadership: a.takeLeadership });
    const sb = selector(client, { id: 'b', takeLeadership: b.takeLeadership });
    await startInOrder(client, sa, sb);
    await log.next('a', 'isLeader');
    sb.interruptLeadership(); // not leading: nothing happens
    const mark = log.mark();
    sa.interruptLeadership();
    expect(sa.hasLeadership).toBe(false);
    const reason = await aborted(a.signals[0]);
    expect(reason).toBeInstanceOf(LeadershipInterruptedError);
    expect((reason as LeadershipInterruptedError).reason).toBe('INTERRUPTED');
    await log.next('b', 'isLeader', mark);
    expect((await sb.getParticipants()).map((p) => p.id)).toEqual(['b']);
    expect(a.signals).toHaveLength(1);
  });

  it('interruptLeadership() with autoRequeue: the interrupted one joins the line again and leads after the others', async () => {
    const client = await connect();
    const a = log.selectorTask('a');
    const b = log.selectorTask('b');
    const sa = selector(client, { id: 'a', autoRequeue: true, takeLeadership: a.takeLeadership });
    const sb = selector(client, { id: 'b', takeLeadership: b.takeLeadership });
    await startInOrder(client, sa, sb);
    await log.next('a', 'isLeader');
    let mark = log.mark();
    sa.interruptLeadership();
    await log.next('b', 'isLeader', mark);
    await eventually('A to queue behind B', async () => (await sb.getParticipants()).map((p) => p.id).join() === 'b,a');
    mark = log.mark();
    b.release();
    await log.next('a', 'isLeader', mark);
    expect(a.signals).toHaveLength(2);
    expect(a.signals[1].aborted).toBe(false);
  });

  it("a killed leader's session: its signal aborts, and the next in line leads; with autoRequeue it joins again in its new session", async () => {
    const leaderClient = await connect();
    const other = await connect();
    const states = new StateRecorder(leaderClient);
    const a = log.selectorTask('a');
    const b = log.selectorTask('b');
    const sa = selector(leaderClient, { id: 'a', autoRequeue: true, takeLeadership: a.takeLeadership });
    const sb = selector(other, { id: 'b', takeLeadership: b.takeLeadership });
    await startInOrder(other, sa, sb);
    await log.next('a', 'isLeader');
    const mark = log.mark();
    const stateMark = states.mark();
    killsConnectedLeader = true;
    await expireSession(leaderClient);
    const reason = await aborted(a.signals[0]);
    expect(reason).toBeInstanceOf(LockLostError);
    await log.next('b', 'isLeader', mark);
    await states.waitFor('LOST', stateMark);
    await eventually('A to queue again in its new session', async () => {
      const children = await childrenOf(other, path);
      if (children.length !== 2) return false;
      const owners = await Promise.all(children.map(async (c) => (await other.exists(`${path}/${c}`))?.ephemeralOwner));
      return owners.includes(leaderClient.sessionId);
    });
    expect(sb.hasLeadership).toBe(true);
    expect(sa.hasLeadership).toBe(false);
  });

  it('a session LOST between winning the mutex and calling takeLeadership: takeLeadership is not called for that win', async () => {
    const traced = new InstrumentedTransports();
    const holderClient = await connect();
    const client = await connect({ transportFactory: traced.factory, connectionStateErrorPolicy: 'session' });
    const states = new StateRecorder(client);
    const holder = log.selectorTask('holder');
    const s = log.selectorTask('s');
    const sHolder = selector(holderClient, { id: 'holder', takeLeadership: holder.takeLeadership });
    const sel = selector(client, { id: 's', autoRequeue: true, takeLeadership: s.takeLeadership });
    await startInOrder(holderClient, sHolder, sel);
    await log.next('holder', 'isLeader');
    // Once S watches the holder's node, it wins on its deletion, and then reads its own node to
    // check it is still its own before it leads.
    await eventually('S to watch the holder', () => traced.replies.some((r) => r.startsWith(`getData ${path}/`)));

    // That read is answered, and held back from S until its session is gone.
    const win = traced.holdNext('exists', (p) => p.startsWith(`${path}/`));
    holder.release();
    await win.reached;
    const mark = states.mark();
    await expireSession(client);
    await states.waitForNewSession(mark);
    win.release();

    // S finds its winning node gone, takes no leadership with it, and wins again with a new node.
    await log.next('s', 'isLeader');
    expect(s.signals).toHaveLength(1);
    expect(s.signals[0].aborted).toBe(false);
    const [node] = await childrenOf(holderClient, path);
    expect((await holderClient.exists(`${path}/${node}`))?.ephemeralOwner).toBe(client.sessionId);
  });

  it('close() while waiting deletes the node; close() while leading aborts the signal with CLOSED and resolves once takeLeadership returned and the node is gone', async () => {
    const client = await connect();
    const a = log.selectorTask('a');
    const b = log.selectorTask('b');
    const sa = selector(client, { id: 'a', autoRequeue: true, takeLeadership: a.takeLeadership });
    const sb = selector(client, { id: 'b', autoRequeue: true, takeLeadership: b.takeLeadership });
    await startInOrder(client, sa, sb);
    await log.next('a', 'isLeader');

    const [, waiting] = (await sb.getParticipants()).map((p) => p.id);
    expect(waiting).toBe('b');
    await sb.close();
    expect((await client.getChildren(path)).length).toBe(1);
    expect(b.signals).toHaveLength(0);

    const [held] = await client.getChildren(path);
    const gone = await watchNode(client, `${path}/${held}`);
    await sa.close();
    expect(a.signals[0].aborted).toBe(true);
    expect((a.signals[0].reason as LeadershipInterruptedError).reason).toBe('CLOSED');
    expect(log.leaders()).toEqual([]);
    expect(await gone.next).toBe('deleted');
    expect(await childrenOf(client, path)).toEqual([]);
    await sa.close(); // idempotent
    expect(() => sa.requeue()).toThrow(/started selector/);
  });

  it('rejects bad arguments, a second start, and requeue() before start()', async () => {
    const client = await connect();
    expect(() => new LeaderSelector(client, path, {} as LeaderSelectorOptions)).toThrow(/takeLeadership must be a function/);
    expect(() => new LeaderSelector(client, 'x', { takeLeadership: () => undefined })).toThrow(/must start with/);
    expect(() => new LeaderSelector(client, path, { takeLeadership: () => undefined, autoRequeue: 'yes' as unknown as boolean })).toThrow(/autoRequeue/);
    const s = selector(client, { takeLeadership: () => undefined });
    expect(() => s.requeue()).toThrow(/started selector/);
    s.start();
    expect(() => s.start()).toThrow(/starts once/);
  });
});
