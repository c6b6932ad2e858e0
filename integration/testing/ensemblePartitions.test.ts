import type { ZkClient } from '../../src';
import { TestingCluster, type TestingServer } from '../../src/testing';
import { Clients, StateRecorder, eventually, memberOf, randomRoot, timing } from '../helpers';

describe('TestingCluster with proxied links: partitions inside the ensemble', () => {
  let cluster: TestingCluster;
  const clients = new Clients();

  beforeAll(async () => {
    // A leader keeps serving only while a quorum acks it within syncLimit ticks. These tests are
    // about partitions: 30 ticks (6 s) keeps a member starved of CPU on a busy machine (a JVM
    // starting beside it, the proxies' event loop held up) from passing for one cut off.
    cluster = await TestingCluster.start(3, { forceSync: false, proxiedLinks: true, config: { syncLimit: 30 } });
  });
  afterEach(async () => {
    cluster.healLinks();
    await clients.closeAll();
    // Every member serves again before the next test.
    await eventually('every member back in the quorum', async () => {
      const modes = await Promise.all(cluster.members.map((m) => m.mode()));
      return modes.filter((m) => m === 'leader').length === 1 && modes.filter((m) => m === 'follower').length === 2;
    }, timing(60_000));
  });
  afterAll(() => cluster.close());

  it('refuses a link of a member to itself, or to a member that is not there', () => {
    expect(() => cluster.link(1, 1)).toThrow(/two different members/);
    expect(() => cluster.link(1, 4)).toThrow(/no link from member 1 to member 4/);
  });

  it('isolating the leader: the two others elect a new one, its client is SUSPENDED and carries on elsewhere; healed, it rejoins', async () => {
    const root = randomRoot();
    const leader = await cluster.waitForLeader();
    // A client on the leader: the client picks its server at random, so try until one lands there.
    let client: ZkClient | undefined;
    for (let attempt = 0; attempt < 40 && client === undefined; attempt++) {
      const c = await clients.connect({ connectString: cluster.connectString, sessionTimeoutMs: 30_000 });
      if ((await memberOf(cluster.members, c)) === leader) client = c;
      else await c.close();
    }
    if (client === undefined) throw new Error('no client landed on the leader in 40 tries');
    const states = new StateRecorder(client);
    const session = client.sessionId;
    await client.create(root, { data: 'before' });

    cluster.isolate(leader.serverId);
    // The isolated leader loses its quorum and stops serving: its clients hear it.
    await states.waitFor('SUSPENDED', 0, timing(30_000));
    const others = cluster.members.filter((m) => m !== leader);
    const newLeader = await eventually('a new leader among the two others', async () => {
      for (const m of others) if ((await m.mode()) === 'leader') return m;
      return undefined;
    }, timing(60_000));
    expect(newLeader).not.toBe(leader);
    await states.waitFor('RECONNECTED', 0, timing(30_000));
    expect(client.sessionId).toBe(session);
    await client.setData(root, 'during');
    expect(others).toContain(await memberOf(cluster.members, client));
    // Clients still reach the isolated member, but it does not serve.
    expect(await leader.mode()).toBeUndefined();

    cluster.healLinks();
    await eventually('the old leader back as a follower', async () => (await leader.mode()) === 'follower', timing(60_000));
    // It has caught up: a client that can only reach it reads what was written without it.
    const direct = await clients.connect({ connectString: leader.connectString });
    await direct.sync(root);
    expect((await direct.getData(root)).data.toString()).toBe('during');
    expect(states.states).not.toContain('LOST');
  });

  it('isolating a follower: the leader keeps its quorum, the follower stops serving; healed, it catches up', async () => {
    const root = randomRoot();
    const leader = await cluster.waitForLeader();
    const [follower] = await cluster.followers();
    const client = await clients.connect({ connectString: leader.connectString, sessionTimeoutMs: 30_000 });
    const states = new StateRecorder(client);

    cluster.isolate(follower.serverId, 'blackhole');
    await eventually('the isolated follower stops serving', async () => (await follower.mode()) === undefined, timing(30_000));
    await client.create(root, { data: 'without it' });
    expect(await cluster.leader()).toBe(leader);

    cluster.healLinks();
    await eventually('the follower back', async () => (await follower.mode()) === 'follower', timing(60_000));
    const direct = await clients.connect({ connectString: follower.connectString });
    await direct.sync(root);
    expect((await direct.getData(root)).data.toString()).toBe('without it');
    expect(states.states).not.toContain('SUSPENDED');
  });

  it('cutting one link between two followers changes nothing: each still reaches the leader', async () => {
    const leader = await cluster.waitForLeader();
    // A quorum elects: the third member may still be syncing (after the test before, rejoining).
    let followers: TestingServer[] = [];
    await eventually('both followers serving', async () => (followers = await cluster.followers()).length === 2, timing(60_000));
    const [a, b] = followers;
    cluster.link(a.serverId, b.serverId).cut();
    const client = await clients.connect({ connectString: `${a.connectString},${b.connectString}` });
    await client.create(randomRoot());
    expect(await cluster.leader()).toBe(leader);
    expect(await a.mode()).toBe('follower');
    expect(await b.mode()).toBe('follower');
  });

  it('a slow link between the leader and a follower delays, and loses nothing', async () => {
    const root = randomRoot();
    const leader = await cluster.waitForLeader();
    const [follower] = await cluster.followers();
    cluster.link(leader.serverId, follower.serverId).delay(300);
    const client = await clients.connect({ connectString: leader.connectString });
    await client.create(root, { data: 'slow' });
    const direct = await clients.connect({ connectString: follower.connectString });
    await direct.sync(root);
    expect((await direct.getData(root)).data.toString()).toBe('slow');
  });
});
