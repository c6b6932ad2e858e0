import { TestingCluster, type TestingServer } from '../../src/testing';
import { Clients, StateRecorder, TEST_TRANSPORT, eventually, randomRoot, timing } from '../helpers';

/**
 * The `ensembleTracker` option on a real ensemble with dynamic reconfiguration: members join and
 * leave through ZooKeeper's own `reconfig`, while a client that was given one member only keeps
 * its session.
 */

/** Long enough for a reconnection after a member stops; short enough that the control test's LOST comes soon. */
const SESSION_MS = 9_000;

/** Whether the session has a connection to the server, by its `cons`. */
async function isOn(server: TestingServer, session: bigint): Promise<boolean> {
  return (await server.fourLetterWord('cons')).includes(`sid=0x${session.toString(16)},`);
}

/** The servers of a connect string, without its chroot. */
function serversOf(connectString: string): string[] {
  return connectString.split('/')[0].split(',');
}

describe('ensemble tracking', () => {
  const clients = new Clients();
  afterEach(() => clients.closeAll());

  /**
   * A client given one member (and a chroot), whose member then leaves the ensemble and stops.
   * Resolves with what the client went through from the removal on.
   */
  async function memberLeaves(ensembleTracker: boolean) {
    const cluster = await TestingCluster.start(3, { reconfigEnabled: true, forceSync: false });
    try {
      const [first] = cluster.members;
      const admin = await clients.connect({ connectString: cluster.connectString, ensembleTracker: false });
      const root = randomRoot('ensemble');
      await admin.create(root);
      const client = await clients.connect({ connectString: `${first.connectString}${root}`, sessionTimeoutMs: SESSION_MS, ensembleTracker });
      const states = new StateRecorder(client);
      if (ensembleTracker) {
        await eventually('the client to learn every member', () => serversOf(client.currentConnectString).length === 3);
        expect(serversOf(client.currentConnectString).sort()).toEqual(cluster.members.map((m) => m.connectString).sort());
        expect(client.currentConnectString.endsWith(root)).toBe(true);

        const joiner = await cluster.addMember();
        await eventually('the client to learn the new member', () => serversOf(client.currentConnectString).includes(joiner.connectString));
      }
      const session = client.sessionId;
      await client.create('/mine', { mode: 'EPHEMERAL' });
      // Still on the member it was given, on the protocol transport. The C client (native) moves
      // to balance the load when the list grows, as the Java client does: it may be elsewhere now.
      const onFirst = await isOn(first, session);
      if (TEST_TRANSPORT === 'protocol' || !ensembleTracker) expect(onFirst).toBe(true);
      const mark = states.mark();
      await cluster.removeMember(first.serverId);
      return { cluster, client, states, mark, session, first, onFirst };
    } catch (err) {
      await clients.closeAll();
      await cluster.close();
      throw err;
    }
  }

  it('a client given one member learns the others and a joiner, and keeps its session and its ephemeral node when its member leaves', async () => {
    const { cluster, client, states, mark, session, first, onFirst } = await memberLeaves(true);
    await using _cluster = cluster;
    if (TEST_TRANSPORT === 'protocol') {
      // The removed member still runs: the client leaves it because the configuration no longer lists it.
      await states.waitFor('RECONNECTED', mark);
      expect(await isOn(first, session)).toBe(false);
      await first.stop();
    } else {
      // The C client tells servers apart by address, not port: here, all on 127.0.0.1, it cannot
      // see that its member left, and moves once that member stops.
      await first.stop();
      if (onFirst) await states.waitFor('RECONNECTED', mark);
    }
    expect(client.sessionId).toBe(session);
    expect(await client.exists('/mine')).not.toBeNull();
    expect(serversOf(client.currentConnectString)).not.toContain(first.connectString);
    expect(serversOf(client.currentConnectString)).toHaveLength(3);
    expect(states.since(mark)).not.toContain('LOST');
    await clients.closeAll();
  });

  it('without tracking, the same client loses its session: it knows no other member', async () => {
    const { cluster, client, states, mark, first } = await memberLeaves(false);
    await using _cluster = cluster;
    await first.stop();
    await states.waitFor('LOST', mark, timing(SESSION_MS * 3));
    expect(client.currentConnectString.startsWith(`${first.connectString}/`)).toBe(true);
    await clients.closeAll();
  });
});
