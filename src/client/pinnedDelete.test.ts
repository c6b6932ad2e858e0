import { InvalidArgumentError, ZkClient } from '..';
import { RetryNTimes } from '../retry';
import { FakeTransport, FakeZooKeeper } from '../../test/FakeTransport';

// Deletes pinned to an ephemeral node's session (DeleteOptions.session): they never act on the
// path in a later session, where it may hold another session's node or a later one of ours.
describe('ZkClient.delete pinned to a session (in-memory fake)', () => {
  function setup() {
    const zk = new FakeZooKeeper();
    const client = new ZkClient({
      connectString: '127.0.0.1:2181',
      sessionTimeoutMs: 60_000,
      connectionTimeoutMs: 100,
      retryPolicy: new RetryNTimes({ n: 2, sleepMsBetweenRetries: 1 }),
      transportFactory: zk.factory(false),
    });
    const transport = () => zk.transports[zk.transports.length - 1] as FakeTransport;
    /** A node at `path` owned by `session`, as another client of that session would make it. */
    const plant = (path: string, session: bigint) => {
      zk.tick();
      zk.nodes.set(path, zk.newNode(Buffer.from('later'), session));
    };
    /** Ends the current session on the server and lets the client see it on reconnecting. */
    const expire = () => {
      const t = transport();
      zk.expire(t.sessionId);
      t.connect();
      expect(transport()).not.toBe(t);
    };
    /** Starts the client, creates the EPHEMERAL node /e and drops the connection: resolves with the node's session. */
    const ephemeralThenDrop = async () => {
      client.start();
      transport().connect();
      const { session } = await client.createAndListParent('/e', { mode: 'EPHEMERAL' });
      transport().disconnect();
      return session;
    };
    return { zk, client, transport, plant, expire, ephemeralThenDrop };
  }

  /** Resolves once the client's background deletes are done; rejects after `timeoutMs`. */
  async function backgroundIdle(client: ZkClient, timeoutMs = 2_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (client.pendingBackgroundDeletes > 0) {
      if (Date.now() > deadline) throw new Error(`background deletes still pending after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  it('deletes in its session, retried there across a connection loss; once the session has ended it rejects with SESSION_LOST, unsent', async () => {
    const { zk, client, transport, plant, expire } = setup();
    client.start();
    transport().connect();
    const { session } = await client.createAndListParent('/e', { mode: 'EPHEMERAL' });
    transport().failures.push('CONNECTIONLOSS');
    await client.delete('/e', { session });
    expect(zk.nodes.has('/e')).toBe(false);

    await client.create('/e', { mode: 'EPHEMERAL' });
    expire();
    transport().connect();
    expect(client.sessionId).not.toBe(session.id);
    // A node of the new session stands at the path now: the pinned delete leaves it alone.
    plant('/e', client.sessionId);
    const before = zk.calls.length;
    await expect(client.delete('/e', { session, quietly: true })).rejects.toMatchObject({ code: 'SESSION_LOST' });
    await expect(client.delete('/e', { session, guaranteed: true })).rejects.toMatchObject({ code: 'SESSION_LOST' });
    expect(zk.calls.slice(before)).toEqual([]);
    expect(client.pendingBackgroundDeletes).toBe(0);
    expect(zk.nodes.get('/e')?.ephemeralOwner).toBe(client.sessionId);
    await expect(client.delete('/e', { session: 42 as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    await client.close();
  });

  it('a pinned delete waiting for a connection when its session ends is not run in the next session', async () => {
    const { zk, client, transport, plant, expire, ephemeralThenDrop } = setup();
    const session = await ephemeralThenDrop();
    const deleting = client.delete('/e', { session, quietly: true, guaranteed: true });
    expire();
    transport().connect();
    // The new session's node is there before the waiting delete gets the connection.
    plant('/e', client.sessionId);
    await expect(deleting).rejects.toMatchObject({ code: 'SESSION_LOST' });
    await backgroundIdle(client);
    expect(zk.nodes.get('/e')?.ephemeralOwner).toBe(client.sessionId);
    await client.close();
  });

  it('guaranteed: when the retries run out in the session, the background delete goes on in it', async () => {
    const { zk, client, transport, ephemeralThenDrop } = setup();
    const session = await ephemeralThenDrop();
    await expect(client.delete('/e', { session, guaranteed: true })).rejects.toMatchObject({ code: 'CONNECTION_TIMEOUT' });
    expect(client.pendingBackgroundDeletes).toBe(1);
    expect(zk.nodes.has('/e')).toBe(true);
    // The same session comes back: the background delete is done in it.
    transport().connect();
    expect(client.session).toBe(session);
    await backgroundIdle(client);
    expect(zk.nodes.has('/e')).toBe(false);
    await client.close();
  });

  it("guaranteed: the background delete of an ended session's node leaves the path alone in the next session", async () => {
    const { zk, client, transport, plant, expire, ephemeralThenDrop } = setup();
    const session = await ephemeralThenDrop();
    await expect(client.delete('/e', { session, guaranteed: true })).rejects.toMatchObject({ code: 'CONNECTION_TIMEOUT' });
    expect(client.pendingBackgroundDeletes).toBe(1);
    expire();
    const next = transport();
    next.connect();
    plant('/e', client.sessionId);
    await backgroundIdle(client);
    expect(zk.nodes.get('/e')?.ephemeralOwner).toBe(next.sessionId);
    expect(zk.calls.filter((c) => c === 'delete /e')).toEqual([]);
    await client.close();
  });

  it('guaranteed: a pinned delete whose retries run out after its session ended leaves nothing in the background', async () => {
    // Its retries wait for a connection in the next session, which drops before they are done:
    // a background delete bound to the session current then would run in it.
    const { zk, client, transport, plant, expire, ephemeralThenDrop } = setup();
    const session = await ephemeralThenDrop();
    const deleting = client.delete('/e', { session, quietly: true, guaranteed: true });
    expire();
    transport().connect();
    transport().disconnect();
    await expect(deleting).rejects.toMatchObject({ code: 'SESSION_LOST' });
    const next = transport();
    plant('/e', next.sessionId);
    next.connect();
    await backgroundIdle(client);
    expect(zk.nodes.get('/e')?.ephemeralOwner).toBe(next.sessionId);
    await client.close();
  });
});
