import { LeaderLatch, LeaderSelector } from '../../../recipes/leader';
import { sortLockNodes } from '../../../recipes/locks';
import type { ZkClient } from '../../../src';
import { FaultProxy, TestingCluster, expireSession } from '../../../src/testing';
import { Clients, StateRecorder, childrenOf, eventually, randomRoot, timing, watchNode } from '../../helpers';
import { LeadershipLog } from './leaderHelpers';

/**
 * Long enough that a client reconnects within it after a server kill: the client declares LOST by
 * itself at 9/10 of it, counted from the last word from the server. A partition is healed once the
 * server has expired the partitioned session, so the client finds it gone whichever comes first.
 */
const SESSION_MS = 9_000;

interface Participant {
  readonly name: string;
  readonly proxy: FaultProxy;
  readonly client: ZkClient;
  readonly states: StateRecorder;
  readonly latch: LeaderLatch;
  readonly selector: LeaderSelector;
}

describe('leader election on a 3-server ensemble under server kills, partitions and session expiries', () => {
  let cluster: TestingCluster;
  const clients = new Clients();
  const proxies: FaultProxy[] = [];
  const recipes: Array<{ close(): Promise<void> }> = [];

  beforeAll(async () => {
    cluster = await TestingCluster.start(3, { forceSync: false });
  });
  afterAll(async () => {
    await Promise.all(recipes.map((r) => r.close()));
    await clients.closeAll();
    await Promise.all(proxies.map((p) => p.close()));
    await cluster?.close();
  });

  it("no two leaderships overlap under the 'standard' policy, and every fault ends with exactly one leader", async () => {
    const root = randomRoot('ensemble');
    const latchPath = `${root}/latch`;
    const selectorPath = `${root}/selector`;
    const latches = new LeadershipLog();
    const selectors = new LeadershipLog();
    const admin = await clients.connect({ connectString: cluster.connectString });

    const participants: Participant[] = [];
    for (const name of ['p0', 'p1', 'p2']) {
      const proxy = await FaultProxy.start(cluster.connectString);
      proxies.push(proxy);
      const client = await clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: SESSION_MS });
      const latch = new LeaderLatch(client, latchPath, { id: name, closeMode: 'notifyLeader' });
      latches.trackLatch(name, latch);
      const task = selectors.selectorTask(name);
      const selector = new LeaderSelector(client, selectorPath, { id: name, autoRequeue: true, takeLeadership: task.takeLeadership });
      recipes.push(latch, selector);
      latch.start();
      selector.start();
      participants.push({ name, proxy, client, states: new StateRecorder(client), latch, selector });
    }

    /** Waits until every participant is in line on both paths and exactly one leads each; returns the leaders. */
    const settle = async (what: string): Promise<{ latch: Participant; selector: Participant }> => {
      await eventually(
        `exactly one leader on each path after ${what}`,
        async () =>
          (await childrenOf(admin, latchPath)).length === 3 &&
          (await childrenOf(admin, selectorPath)).length === 3 &&
          participants.filter((p) => p.latch.hasLeadership).length === 1 &&
          participants.filter((p) => p.selector.hasLeadership).length === 1 &&
          latches.leaders().length === 1 &&
          selectors.leaders().length === 1,
        timing(45_000),
      );
      return {
        latch: participants.find((p) => p.latch.hasLeadership) as Participant,
        selector: participants.find((p) => p.selector.hasLeadership) as Participant,
      };
    };
    /**
     * Partitions `victim` (a leader) until the server has expired its session, then heals: it must
     * give up on SUSPENDED, someone else must lead, and it must hear LOST.
     */
    const partition = async (victim: Participant, log: LeadershipLog, node: string) => {
      const mark = log.mark();
      const states = victim.states.mark();
      const expired = await watchNode(admin, node, timing(30_000));
      victim.proxy.blackhole();
      await victim.states.waitFor('SUSPENDED', states);
      expect(await expired.next).toBe('deleted');
      victim.proxy.heal();
      const next = await log.nextLeader(mark, timing(30_000));
      expect(next.who).not.toBe(victim.name);
      await victim.states.waitFor('LOST', states);
    };

    /**
     * Expires `victim`'s session while it is cut off, as sessions expire: its client has heard
     * nothing for a while. (Killing a session whose client is connected is like deleting a
     * leader's node: the old leader hears of it only afterwards, and no election can prevent an
     * overlap then.)
     */
    const expire = async (victim: Participant) => {
      const states = victim.states.mark();
      // Straight to the servers: the victim's own way goes through its blackholed proxy.
      const session = { ...victim.client.getSessionCredentials(), connectString: admin.options.connectString };
      victim.proxy.blackhole();
      await victim.states.waitFor('SUSPENDED', states);
      await expireSession(session);
      victim.proxy.heal();
      await victim.states.waitFor('LOST', states);
    };

    let leaders = await settle('start');

    // 1. The ensemble's leader dies; the survivors elect another; it comes back.
    const zkLeader = await cluster.waitForLeader();
    await zkLeader.kill();
    await cluster.waitForLeader();
    leaders = await settle('killing the ensemble leader');
    await zkLeader.start();
    await cluster.waitForLeader();
    leaders = await settle('restarting it');

    // 2. The latch leader is partitioned: it gives up on SUSPENDED; another leads once its session expires.
    let victim = leaders.latch;
    await partition(victim, latches, victim.latch.ourPath as string);
    leaders = await settle('partitioning the latch leader');

    // 3. The selector leader's session expires.
    await expire(leaders.selector);
    leaders = await settle("expiring the selector leader's session");

    // 4. A follower server dies and comes back.
    const [follower] = await cluster.followers();
    await follower.kill();
    leaders = await settle('killing a follower server');
    await follower.start();
    await cluster.waitForLeader();
    leaders = await settle('restarting it');

    // 5. A short cut of the latch leader's connection: it gives up, and takes leadership back.
    victim = leaders.latch;
    const mark = latches.mark();
    const states = victim.states.mark();
    victim.proxy.cut();
    await victim.states.waitFor('SUSPENDED', states);
    victim.proxy.heal();
    await victim.states.waitFor('RECONNECTED', states);
    leaders = await settle('cutting the latch leader briefly');
    expect(latches.events.slice(mark).some((e) => e.who === victim.name && e.type === 'notLeader')).toBe(true);

    // 6. The selector leader is partitioned.
    victim = leaders.selector;
    const [head] = sortLockNodes(await admin.getChildren(selectorPath), ['lock-']);
    expect((await admin.getData(`${selectorPath}/${head}`)).data.toString()).toBe(victim.name);
    await partition(victim, selectors, `${selectorPath}/${head}`);
    leaders = await settle('partitioning the selector leader');

    // 7. The latch leader's session expires.
    await expire(leaders.latch);
    await settle("expiring the latch leader's session");

    expect(latches.overlaps()).toEqual([]);
    expect(selectors.overlaps()).toEqual([]);
    // Leadership did move around.
    expect(new Set(latches.intervals.map((i) => i.who)).size).toBeGreaterThan(1);
    expect(new Set(selectors.intervals.map((i) => i.who)).size).toBeGreaterThan(1);
  }, 120_000);
});
