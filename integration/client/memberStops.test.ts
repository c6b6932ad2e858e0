import { TestingCluster } from '../../src/testing';
import { Clients, StateRecorder, eventually, memberOf, randomRoot, timing } from '../helpers';

/**
 * A member that stops answering (its process paused: it still accepts connections, and answers
 * nothing) must not keep a client: at its first read timeout the client moves to another member,
 * in the same session, rather than trying the same member again.
 */
describe('a member that stops answering', () => {
  let cluster: TestingCluster;
  const clients = new Clients();

  beforeAll(async () => {
    cluster = await TestingCluster.start(3, { forceSync: false });
  });
  afterEach(async () => {
    for (const m of cluster.members) if (m.isPaused) m.resume();
    await clients.closeAll();
  });
  afterAll(() => cluster.close());

  it('is left at the first read timeout: the client carries on at another member in the same session', async () => {
    await cluster.waitForLeader();
    const root = randomRoot();
    // Long enough for the two others to elect a leader should the paused member lead.
    const client = await clients.connect({ connectString: cluster.connectString, sessionTimeoutMs: 30_000 });
    await client.create(root, { data: 'before' });
    const sessionId = client.sessionId;
    const stopped = await eventually('the member the client is on', () => memberOf(cluster.members, client));
    const states = new StateRecorder(client);
    const mark = states.mark();

    stopped.pause();
    await states.waitFor('SUSPENDED', mark, timing(60_000));
    await states.waitFor('RECONNECTED', mark, timing(60_000));
    // Still paused: the client did not wait for it to come back.
    expect(stopped.isPaused).toBe(true);
    expect(client.sessionId).toBe(sessionId);
    expect(states.states.slice(mark)).not.toContain('LOST');
    const now = await eventually('the member the client is on now', () => memberOf(cluster.members, client));
    expect(now).not.toBe(stopped);
    // And it serves there: a write, and a read of it.
    await client.setData(root, 'after');
    expect((await client.getData(root)).data.toString()).toBe('after');
  });
});
