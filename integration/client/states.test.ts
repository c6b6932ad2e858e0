import { FaultProxy, expireSession } from '../../src/testing';
import { StateRecorder, TEST_TRANSPORT, nextEvent, randomRoot, timing, watchNode } from '../helpers';
import { useZooKeeper } from '../fixture';

describe('ZkClient connection states', () => {
  const zk = useZooKeeper();

  it("reports CONNECTED once on the first connection, coming from 'LATENT'", async () => {
    const client = zk.clients.create({ connectString: zk.server.connectString });
    const states = new StateRecorder(client);
    const transitions: string[] = [];
    client.on('stateChanged', (state, previous) => transitions.push(`${previous} -> ${state}`));
    expect(client.state).toBeUndefined();
    client.start();
    await states.waitFor('CONNECTED', 0);
    expect(states.states).toEqual(['CONNECTED']);
    expect(transitions).toEqual(['LATENT -> CONNECTED']);
    expect(client.sessionId).toBeGreaterThan(0n);
  });

  /**
   * LOST comes a margin before the server could expire the session, counted from the last word from
   * it. The native transport cannot see the C client's pings, so it counts from two thirds of the
   * session timeout before the drop: a third of it less the margin is all a restart may take.
   */
  const SURVIVES_RESTART_MS = 30_000;

  it('server restart: SUSPENDED, then RECONNECTED with the same session', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString, sessionTimeoutMs: SURVIVES_RESTART_MS });
    const states = new StateRecorder(client);
    const session = client.sessionId;
    const mark = states.mark();
    await zk.server.restart();
    await states.waitFor('RECONNECTED', mark);
    expect(states.since(mark)).toEqual(['SUSPENDED', 'RECONNECTED']);
    expect(client.sessionId).toBe(session);
  });

  it('expireSession: LOST, then RECONNECTED with a new session; old ephemerals and watches end', async () => {
    const root = randomRoot();
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const states = new StateRecorder(client);
    const session = client.sessionId;
    await client.create(root);
    const node = await client.create(`${root}/e`, { mode: 'EPHEMERAL' });
    // A watch on a node nobody touches: only the end of the session can end it.
    let ended: (type: string) => void = () => undefined;
    const watchEnded = nextEvent<string>((done) => (ended = done), 'the watch to end');
    expect(await client.exists(`${root}/never`, { watcher: (e) => ended(e.type) })).toBeNull();
    const mark = states.mark();
    await expireSession(client);
    await states.waitFor('LOST', mark);
    const lost = states.states.indexOf('LOST', mark);
    await states.waitFor('RECONNECTED', lost + 1);
    const seen = states.since(mark);
    expect(seen.slice(-2)).toEqual(['LOST', 'RECONNECTED']);
    expect(seen.filter((s) => s === 'LOST')).toHaveLength(1);
    expect(client.sessionId).not.toBe(session);
    if (TEST_TRANSPORT === 'native') {
      // 'sessionLost' when the expiry is found by the handle that set the watch; 'notWatching' when
      // that handle sat without a connection long enough to be replaced first. Either way it ended.
      expect(['sessionLost', 'notWatching']).toContain(await watchEnded);
    } else {
      // The protocol transport keeps its watches across reconnects: only the session's end ends it.
      expect(await watchEnded).toBe('sessionLost');
    }
    expect(await client.exists(node)).toBeNull();
  });

  it('a listener that throws never breaks the client, and the others still hear every change', async () => {
    const client = zk.clients.create({ connectString: zk.server.connectString, sessionTimeoutMs: SURVIVES_RESTART_MS });
    client.on('stateChanged', () => {
      throw new Error('listener bug');
    });
    const states = new StateRecorder(client);
    client.start();
    await states.waitFor('CONNECTED', 0);
    await zk.server.restart();
    await states.waitFor('RECONNECTED', 0);
    expect(states.states).toEqual(['CONNECTED', 'SUSPENDED', 'RECONNECTED']);
    await client.create(randomRoot());
  });

  it('tells error states apart by policy', async () => {
    const standard = zk.clients.create({ connectString: zk.server.connectString });
    const session = zk.clients.create({ connectString: zk.server.connectString, connectionStateErrorPolicy: 'session' });
    expect(standard.isErrorState('SUSPENDED')).toBe(true);
    expect(standard.isErrorState('LOST')).toBe(true);
    expect(standard.isErrorState('RECONNECTED')).toBe(false);
    expect(session.isErrorState('SUSPENDED')).toBe(false);
    expect(session.isErrorState('LOST')).toBe(true);
  });

  describe('through a fault proxy', () => {
    let proxy: FaultProxy;
    beforeEach(async () => {
      proxy = await FaultProxy.start(zk.server.connectString);
    });
    afterEach(() => proxy.close());

    it('a blackhole longer than the session timeout: SUSPENDED, LOST, then RECONNECTED with a new session', async () => {
      const root = randomRoot();
      const observer = await zk.clients.connect({ connectString: zk.server.connectString });
      const client = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 2_000 });
      const states = new StateRecorder(client);
      const session = client.sessionId;
      expect(client.negotiatedSessionTimeoutMs).toBe(2_000);
      await observer.create(root);
      const node = await client.create(`${root}/e`, { mode: 'EPHEMERAL' });

      const mark = states.mark();
      proxy.blackhole();
      await states.waitFor('SUSPENDED', mark, timing(10_000));
      // LOST comes from the client's own clock: the server is never heard from in between.
      await states.waitFor('LOST', mark, timing(10_000));
      // The server expires the old session and deletes its node, whatever the client does.
      const expiry = await watchNode(observer, node);
      if (expiry.existed) expect(await expiry.next).toBe('deleted');
      proxy.heal();
      await states.waitFor('RECONNECTED', mark, timing(15_000));
      expect(states.since(mark)).toEqual(['SUSPENDED', 'LOST', 'RECONNECTED']);
      expect(client.sessionId).not.toBe(session);
      expect(client.sessionId).not.toBe(0n);
    });

    it('a short cut: SUSPENDED then RECONNECTED with the same session, never LOST', async () => {
      const client = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 10_000 });
      const states = new StateRecorder(client);
      const session = client.sessionId;
      const mark = states.mark();
      proxy.cut();
      await states.waitFor('SUSPENDED', mark);
      proxy.heal();
      await states.waitFor('RECONNECTED', mark);
      expect(states.since(mark)).toEqual(['SUSPENDED', 'RECONNECTED']);
      expect(client.sessionId).toBe(session);
    });
  });
});
