import { LeaderLatch, LeaderSelector } from '../../../recipes/leader';
import { LockLostError } from '../../../recipes/locks';
import type { ConnectionState, ConnectionStateErrorPolicy, ZkClient, ZkClientOptions } from '../../../src';
import { StateRecorder, aborted, childrenOf, eventually, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { LeadershipLog } from './leaderHelpers';

/**
 * Session timeout of partitioned clients: SUSPENDED after about 2/3 of it, LOST declared by the
 * client itself at 9/10 of it (counted from the last word from the server, so before the server
 * can expire the session), expiry on the server after all of it. The tests heal a partition once
 * the server has expired the session, so the client finds it gone whichever comes first.
 */
const SHORT_SESSION_MS = 4_000;

describe('leader election under faults', () => {
  let root: string;
  const closers: Array<() => Promise<void>> = [];
  const zk = useZooKeeper({ beforeClose: () => Promise.all(closers.splice(0).map((c) => c())) });

  const connect = (extra: Partial<ZkClientOptions> = {}): Promise<ZkClient> => zk.clients.connect({ connectString: zk.server.connectString, ...extra });
  const proxy = () => zk.startProxy();
  const latch = (client: ZkClient, id: string, log: LeadershipLog, path = `${root}/latch`): LeaderLatch => {
    const l = new LeaderLatch(client, path, { id, closeMode: 'notifyLeader' });
    log.trackLatch(id, l);
    closers.push(() => l.close());
    return l;
  };
  const selector = (client: ZkClient, id: string, log: LeadershipLog) => {
    const task = log.selectorTask(id);
    const s = new LeaderSelector(client, `${root}/selector`, { id, autoRequeue: true, takeLeadership: task.takeLeadership });
    closers.push(() => s.close());
    return { selector: s, task };
  };

  beforeEach(() => {
    root = randomRoot('leaderfaults');
  });

  it("'standard' policy: a partitioned leader gives up on SUSPENDED, before anyone else can lead; after the heal there is exactly one leader", async () => {
    const faults = await proxy();
    const aClient = await zk.clients.connect({ connectString: faults.connectString, sessionTimeoutMs: SHORT_SESSION_MS });
    const bClient = await connect();
    const states = new StateRecorder(aClient);
    const latches = new LeadershipLog();
    const selectors = new LeadershipLog();
    const la = latch(aClient, 'a', latches);
    const sa = selector(aClient, 'a', selectors);
    la.start();
    sa.selector.start();
    await latches.next('a', 'isLeader');
    await selectors.next('a', 'isLeader');
    const lb = latch(bClient, 'b', latches);
    const sb = selector(bClient, 'b', selectors);
    lb.start();
    sb.selector.start();
    await eventually('B to queue on both paths', async () =>
      (await childrenOf(bClient, `${root}/latch`)).length === 2 && (await childrenOf(bClient, `${root}/selector`)).length === 2,
    );

    const mark = states.mark();
    faults.blackhole();
    const latchLost = await latches.next('a', 'notLeader');
    expect(states.since(mark)).toEqual(['SUSPENDED']);
    const reason = (await aborted(sa.task.signals[0])) as LockLostError;
    expect(reason.reason).toBe('SUSPENDED');
    // B leads only once the server expires A's session.
    const latchWon = await latches.next('b', 'isLeader');
    const selectorWon = await selectors.next('b', 'isLeader');
    faults.heal();
    expect(latchWon.seq).toBeGreaterThan(latchLost.seq);
    expect(latches.overlaps()).toEqual([]);
    expect(selectors.overlaps()).toEqual([]);
    expect(selectorWon.at).toBeGreaterThanOrEqual(latchLost.at);

    await states.waitForNewSession(mark, timing(20_000));
    await eventually('A to join both again in its new session', async () =>
      (await childrenOf(bClient, `${root}/latch`)).length === 2 && (await childrenOf(bClient, `${root}/selector`)).length === 2,
    );
    expect([la.hasLeadership, lb.hasLeadership]).toEqual([false, true]);
    expect([sa.selector.hasLeadership, sb.selector.hasLeadership]).toEqual([false, true]);
    expect(latches.leaders()).toEqual(['b']);
    expect(selectors.leaders()).toEqual(['b']);
  });

  it.each(['standard', 'session'] as const)("'%s' policy: LOST always means notLeader (and a LockLostError for the selector)", async (policy: ConnectionStateErrorPolicy) => {
    const faults = await proxy();
    const aClient = await zk.clients.connect({ connectString: faults.connectString, sessionTimeoutMs: SHORT_SESSION_MS, connectionStateErrorPolicy: policy });
    const bClient = await connect();
    const states = new StateRecorder(aClient);
    const latches = new LeadershipLog();
    const selectors = new LeadershipLog();
    const la = latch(aClient, 'a', latches);
    const sa = selector(aClient, 'a', selectors);
    let stateAtNotLeader: ConnectionState | undefined;
    la.on('notLeader', () => (stateAtNotLeader ??= aClient.state));
    la.start();
    sa.selector.start();
    await latches.next('a', 'isLeader');
    await selectors.next('a', 'isLeader');
    const lb = latch(bClient, 'b', latches);
    lb.start();
    await eventually('B to queue', async () => (await childrenOf(bClient, `${root}/latch`)).length === 2);

    const mark = states.mark();
    faults.blackhole();
    await states.waitFor('SUSPENDED', mark);
    if (policy === 'session') {
      // Suspended, not lost: the leader leads on.
      expect(la.hasLeadership).toBe(true);
      expect(sa.selector.hasLeadership).toBe(true);
    }
    // The server expires A's session; A hears of it once the partition heals.
    await latches.next('b', 'isLeader');
    faults.heal();
    await states.waitFor('LOST', mark, timing(20_000));
    await latches.next('a', 'notLeader');
    expect(la.hasLeadership).toBe(false);
    expect(stateAtNotLeader).toBe(policy === 'session' ? 'LOST' : 'SUSPENDED');
    const reason = (await aborted(sa.task.signals[0])) as LockLostError;
    expect(reason).toBeInstanceOf(LockLostError);
    expect(reason.reason).toBe(policy === 'session' ? 'LOST' : 'SUSPENDED');
    expect(sa.selector.hasLeadership).toBe(false);

    await eventually('exactly one latch leader with both in line', async () =>
      (await childrenOf(bClient, `${root}/latch`)).length === 2 && [la, lb].filter((l) => l.hasLeadership).length === 1,
    );
    expect(lb.hasLeadership).toBe(true);
  });

  it.each(['standard', 'session'] as const)(
    "'%s' policy through a server stop and restart: 10 latches end with exactly one leader",
    async (policy: ConnectionStateErrorPolicy) => {
      const log = new LeadershipLog();
      const pair = [await connect({ connectionStateErrorPolicy: policy }), await connect({ connectionStateErrorPolicy: policy })];
      const states = new StateRecorder(pair[0]);
      const all = Array.from({ length: 10 }, (_, i) => latch(pair[i % 2], `l${i}`, log));
      for (const l of all) l.start();
      const first = await log.nextLeader(0);
      await eventually('all ten to join', async () => (await childrenOf(pair[0], `${root}/latch`)).length === 10);

      const mark = states.mark();
      const events = log.mark();
      await zk.server.stop();
      await states.waitFor('SUSPENDED', mark);
      await zk.server.start();
      await states.waitFor('RECONNECTED', mark);
      await eventually('exactly one leader among the ten', () => all.filter((l) => l.hasLeadership).length === 1 && log.leaders().length === 1);
      // The same leader, same session: 'standard' gave leadership up and took it back, 'session' kept it.
      expect(log.leaders()).toEqual([first.who]);
      const during = log.events.slice(events).map((e) => `${e.who}:${e.type}`);
      expect(during).toEqual(policy === 'standard' ? [`${first.who}:notLeader`, `${first.who}:isLeader`] : []);
      expect(log.overlaps()).toEqual([]);
    },
  );
});
