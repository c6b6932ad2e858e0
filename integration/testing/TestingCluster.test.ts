import { TestingCluster } from '../../src/testing';
import { Clients, StateRecorder, randomRoot } from '../helpers';

describe('TestingCluster', () => {
  let cluster: TestingCluster;
  const clients = new Clients();

  beforeAll(async () => {
    cluster = await TestingCluster.start(3, { forceSync: false });
  });
  afterEach(() => clients.closeAll());
  afterAll(() => cluster.close());

  it('elects one leader among three members', async () => {
    const leader = await cluster.waitForLeader();
    const followers = await cluster.followers();
    expect(followers).toHaveLength(2);
    expect(followers).not.toContain(leader);
    expect(cluster.connectString.split(',')).toHaveLength(3);
  });

  it('loses its leader to kill(), elects another, and a connected client carries on without LOST', async () => {
    const root = randomRoot();
    // The client declares LOST a margin before the server could expire the session, counted on the
    // native transport from two thirds of the timeout before the drop: with 10 s, an election, the
    // new leader's sync and the reconnect had 2.3 s there. 30 s leaves 9 s.
    const client = await clients.connect({ connectString: cluster.connectString, sessionTimeoutMs: 30_000 });
    const states = new StateRecorder(client);
    const session = client.sessionId;
    await client.create(root, { data: 'before' });
    const ephemeral = await client.create(`${root}/e`, { mode: 'EPHEMERAL' });

    const oldLeader = await cluster.waitForLeader();
    await oldLeader.kill();
    const newLeader = await cluster.waitForLeader();
    expect(newLeader).not.toBe(oldLeader);

    // Whether or not this client was on the old leader, its session lives on.
    await client.setData(root, 'after');
    expect((await client.getData(root)).data.toString()).toBe('after');
    expect(client.sessionId).toBe(session);
    expect((await client.exists(ephemeral))?.ephemeralOwner).toBe(session);
    expect(states.states).not.toContain('LOST');

    await oldLeader.start();
    expect(['leader', 'follower']).toContain(await oldLeader.mode());
  });

  it('can stop, pause and restart a follower while the ensemble serves', async () => {
    const [follower] = await cluster.followers();
    const client = await clients.connect({ connectString: cluster.connectString });
    follower.pause();
    await cluster.waitForLeader();
    const root = randomRoot();
    // ensurePath, not create: if the client was on the paused follower, its create may have gone
    // in with the reply lost, and a retried create would find the node (NODEEXISTS).
    await client.ensurePath(root);
    follower.resume();
    await follower.restart();
    expect(['leader', 'follower']).toContain(await follower.mode());
    expect(await client.exists(root)).not.toBeNull();
  });

  it('with reconfigEnabled, adds a member and removes one through reconfig, and says so in /zookeeper/config', async () => {
    await using growing = await TestingCluster.start(3, { forceSync: false, reconfigEnabled: true });
    const admin = await clients.connect({ connectString: growing.connectString, ensembleTracker: false });
    const config = async () => (await admin.getData('/zookeeper/config')).data.toString();
    const clientPorts = (text: string) => [...text.matchAll(/;127\.0\.0\.1:(\d+)$/gm)].map((m) => Number(m[1])).sort();
    const ports = () => growing.members.map((m) => m.port).sort();
    expect(clientPorts(await config())).toEqual(ports());

    const joiner = await growing.addMember();
    expect(joiner.serverId).toBe(4);
    expect(growing.members).toHaveLength(4);
    await admin.sync('/');
    expect(clientPorts(await config())).toEqual(ports());
    expect(ports()).toContain(joiner.port);

    const [first] = growing.members;
    await growing.removeMember(first.serverId);
    expect(growing.members.map((m) => m.serverId)).toEqual([2, 3, 4]);
    await admin.sync('/');
    expect(clientPorts(await config())).toEqual(ports());
    await clients.closeAll();
  });

  it('refuses reconfiguration on an ensemble started without it, and proxiedLinks with it, before starting anything', async () => {
    await expect(cluster.addMember()).rejects.toThrow(/reconfigEnabled/);
    await expect(cluster.removeMember(1)).rejects.toThrow(/reconfigEnabled/);
    await expect(TestingCluster.start(3, { proxiedLinks: true, reconfigEnabled: true })).rejects.toThrow(/not both/);
  });
});
