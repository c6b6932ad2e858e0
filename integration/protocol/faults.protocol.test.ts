/**
 * The protocol transport under network faults, against real servers: a reset in the middle of a
 * frame, a reply that never comes, a server restart with watches set, watches that fire for what
 * changed while disconnected, a session that expires while disconnected, and a 3-node ensemble
 * whose leader is killed. These are about the protocol transport itself, whatever
 * ZK_TEST_TRANSPORT says; they run in the protocol pass.
 */
import { isZkError, type WatchEvent, type ZkClientOptions } from '../../src';
import { ProtocolTransport } from '../../src/protocol/ProtocolTransport';
import { FaultProxy, TestingCluster, TestingServer } from '../../src/testing';
import { OPEN_ACL, type Transport, type TransportEvents } from '../../src/transport/Transport';
import { Clients, StateRecorder, nextEvent, randomRoot, timing } from '../helpers';

const clients = new Clients();

function connect(options: ZkClientOptions) {
  return clients.connect({ transport: 'protocol', ...options });
}

/** Resolves with the argument of the next `event` of `t`; rejects after `ms`. */
function next<E extends keyof TransportEvents>(t: Transport, event: E, ms = timing(20_000)): Promise<Parameters<TransportEvents[E]>[0]> {
  return nextEvent((done) => {
    const listener = ((arg: never) => {
      t.off(event, listener);
      done(arg);
    }) as TransportEvents[E];
    t.on(event, listener);
  }, `'${event}'`, ms);
}

/** Collects watch events, and waits for a given number of them. */
class Events {
  readonly seen: string[] = [];
  private wake: (() => void) | undefined;
  readonly watcher = (e: WatchEvent) => {
    this.seen.push(`${e.type} ${e.path}`);
    this.wake?.();
  };
  async count(n: number, ms = timing(20_000)): Promise<string[]> {
    const deadline = Date.now() + ms;
    while (this.seen.length < n) {
      if (Date.now() > deadline) throw new Error(`${n} events expected within ${ms} ms, got ${JSON.stringify(this.seen)}`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 50);
      });
    }
    return [...this.seen].sort();
  }
}

describe('protocol transport faults, one server', () => {
  let server: TestingServer;
  let proxy: FaultProxy;
  const transports: ProtocolTransport[] = [];

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
  });
  beforeEach(async () => {
    proxy = await FaultProxy.start(server.connectString);
  });
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
    await clients.closeAll();
    await proxy.close();
  });
  afterAll(() => server.close());

  async function openTransport(connectString: string, sessionTimeoutMs: number): Promise<ProtocolTransport> {
    const t = new ProtocolTransport({ connectString, sessionTimeoutMs });
    transports.push(t);
    await next(t, 'connected');
    return t;
  }

  it('a reset in the middle of a frame: CONNECTIONLOSS for the request, then the same session reads the node whole', async () => {
    const root = randomRoot('proto');
    const admin = await connect({ connectString: server.connectString });
    const big = Buffer.alloc(1_000_000);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 0xff;
    await admin.create(root, { data: big });
    const t = await openTransport(proxy.connectString, 10_000);
    const session = t.sessionId;
    // The reply (a megabyte) comes in chunks of at most 64 KB: the first reaches the client, the
    // connection is reset on the second, inside the frame.
    let armed = false;
    const forwarded: number[] = [];
    const stop = proxy.intercept((chunk, { direction }) => {
      if (!armed || direction !== 'upstream->client') return 'forward';
      if (forwarded.length > 0) return 'reset';
      forwarded.push(chunk.length);
      return 'forward';
    });
    armed = true;
    const connecting = next(t, 'connecting');
    const read = t.getData(root);
    read.catch(() => undefined);
    await connecting;
    stop();
    expect(forwarded).toHaveLength(1);
    expect(forwarded[0]).toBeLessThan(big.length);
    await expect(read).rejects.toMatchObject({ code: 'CONNECTIONLOSS' });
    await next(t, 'connected');
    expect(t.sessionId).toBe(session);
    expect((await t.getData(root)).data.equals(big)).toBe(true);
  });

  it('a reset inside 20 MB of pipelined replies: CONNECTIONLOSS for the rest, those read before are whole', async () => {
    const root = randomRoot('proto');
    const admin = await connect({ connectString: server.connectString });
    const big = Buffer.alloc(1_000_000, 5);
    await admin.create(root, { data: big });
    const t = await openTransport(proxy.connectString, 10_000);
    const reads = Array.from({ length: 20 }, () => t.getData(root));
    for (const r of reads) r.catch(() => undefined);
    expect((await reads[0]).data.equals(big)).toBe(true);
    const connecting = next(t, 'connecting');
    proxy.cut();
    await connecting;
    const outcomes = await Promise.allSettled(reads);
    expect(outcomes.some((o) => o.status === 'rejected')).toBe(true);
    for (const o of outcomes) {
      if (o.status === 'rejected') expect(isZkError(o.reason, 'CONNECTIONLOSS')).toBe(true);
      else expect(o.value.data.equals(big)).toBe(true);
    }
    proxy.heal();
    await next(t, 'connected');
    expect((await t.getData(root)).data.equals(big)).toBe(true);
  });

  it('a reply that never comes: the read times out at two thirds of the session timeout, and the session carries on', async () => {
    const root = randomRoot('proto');
    // The server keeps a silent session for its whole timeout; the client gives up on the
    // connection at two thirds of it, then waits up to two tenths (its reconnect delays) before it
    // tries again. That leaves the client at least 2 s to get back into its session out of a
    // 12 s timeout, which load on the machine cannot eat. (With 3 s it was 400 to 700 ms: a
    // reconnect that landed as the server expired the session found its ephemeral node gone.)
    const t = await openTransport(proxy.connectString, 12_000);
    await t.create(root, Buffer.alloc(0), 'PERSISTENT', OPEN_ACL);
    const node = await t.create(`${root}/e`, Buffer.alloc(0), 'EPHEMERAL', OPEN_ACL);
    const session = t.sessionId;
    proxy.blackhole();
    const startedAt = Date.now();
    const read = t.getData(root);
    const cause = await next(t, 'connecting');
    const waitedMs = Date.now() - startedAt;
    expect(String(cause)).toMatch(/read timeout 8000 ms/);
    expect(waitedMs).toBeGreaterThanOrEqual(7_500);
    expect(waitedMs).toBeLessThan(timing(12_000));
    await expect(read).rejects.toMatchObject({ code: 'CONNECTIONLOSS' });
    proxy.heal();
    await next(t, 'connected');
    expect(t.sessionId).toBe(session);
    expect((await t.exists(node))?.ephemeralOwner).toBe(session);
  });

  it('a server restart with watches set: they survive, and fire on the next change', async () => {
    const root = randomRoot('proto');
    const client = await connect({ connectString: server.connectString });
    const other = await connect({ connectString: server.connectString });
    const states = new StateRecorder(client);
    const session = client.sessionId;
    await client.create(root, { data: 'a' });
    await client.create(`${root}/p`);
    const events = new Events();
    await client.getData(root, { watcher: events.watcher });
    await client.getChildren(`${root}/p`, { watcher: events.watcher });
    expect(await client.exists(`${root}/missing`, { watcher: events.watcher })).toBeNull();
    const mark = states.mark();
    await server.restart();
    await states.waitFor('RECONNECTED', mark);
    expect(client.sessionId).toBe(session);
    expect(events.seen).toEqual([]);
    await other.setData(root, 'b');
    await other.create(`${root}/p/c`);
    await other.create(`${root}/missing`);
    expect(await events.count(3)).toEqual([`changed ${root}`, `child ${root}/p`, `created ${root}/missing`]);
    expect(states.since(mark)).toEqual(['SUSPENDED', 'RECONNECTED']);
  });

  it('changes made while disconnected fire the watches as soon as they are set again, with the last zxid seen', async () => {
    const root = randomRoot('proto');
    const client = await connect({ connectString: proxy.connectString });
    const other = await connect({ connectString: server.connectString });
    const states = new StateRecorder(client);
    await client.create(root, { data: 'a' });
    await client.create(`${root}/kept`);
    const events = new Events();
    await client.getData(root, { watcher: events.watcher });
    expect(await client.exists(`${root}/missing`, { watcher: events.watcher })).toBeNull();
    await client.getData(`${root}/kept`, { watcher: events.watcher });
    const mark = states.mark();
    proxy.cut();
    await states.waitFor('SUSPENDED', mark);
    await other.setData(root, 'b');
    await other.create(`${root}/missing`);
    proxy.heal();
    await states.waitFor('RECONNECTED', mark);
    expect(await events.count(2)).toEqual([`changed ${root}`, `created ${root}/missing`]);
    // The untouched node's watch is still set.
    await other.delete(`${root}/kept`);
    expect(await events.count(3)).toContain(`deleted ${root}/kept`);
  });

  it('a session that expires while disconnected: only the server says so, once the client is back', async () => {
    const root = randomRoot('proto');
    const admin = await connect({ connectString: server.connectString });
    await admin.create(root);
    const t = await openTransport(proxy.connectString, 2_000);
    const node = await t.create(`${root}/e`, Buffer.alloc(0), 'EPHEMERAL', OPEN_ACL);
    let closedAt = 0;
    const closed = next(t, 'closed', timing(30_000)).then((reason) => {
      closedAt = Date.now();
      return reason;
    });
    proxy.blackhole();
    // The server expires the session after its timeout; the client, cut off, cannot know.
    const gone = await nextEvent<string>((done) => {
      const poll = async () => ((await admin.exists(node)) === null ? done('gone') : setTimeout(poll, 100));
      void poll();
    }, 'the ephemeral node to go', timing(20_000));
    expect(gone).toBe('gone');
    expect(t.isClosed).toBe(false);
    const healedAt = Date.now();
    proxy.heal();
    expect(await closed).toBe('expired');
    // Expired on the server well before, but told only by the server, after the heal.
    expect(closedAt).toBeGreaterThanOrEqual(healedAt);
    await expect(t.getData(root)).rejects.toMatchObject({ code: 'SESSIONEXPIRED' });
  });
});

describe('protocol transport faults, a 3-node ensemble', () => {
  let cluster: TestingCluster;
  const proxies: FaultProxy[] = [];

  beforeAll(async () => {
    cluster = await TestingCluster.start(3, { forceSync: false });
  });
  afterAll(async () => {
    await clients.closeAll();
    await Promise.all(proxies.map((p) => p.close()));
    await cluster.close();
  });

  it('the leader is killed: the client rotates to the other servers and keeps its session, node and watch', async () => {
    const root = randomRoot('proto');
    const leader = await cluster.waitForLeader();
    // One proxy per member, so the test sees which member the client talks to.
    for (const member of cluster.members) proxies.push(await FaultProxy.start(member.connectString));
    const leaderProxy = proxies[cluster.members.indexOf(leader)];
    const others = proxies.filter((p) => p !== leaderProxy);
    // Only the leader can be reached at first.
    for (const p of others) p.cut();
    const client = await connect({ connectString: proxies.map((p) => p.connectString).join(','), sessionTimeoutMs: 15_000 });
    const states = new StateRecorder(client);
    const session = client.sessionId;
    expect(leaderProxy.connectionCount).toBe(1);
    for (const p of others) p.heal();
    await client.create(root);
    const node = await client.create(`${root}/e`, { mode: 'EPHEMERAL' });
    const events = new Events();
    await client.getData(root, { watcher: events.watcher });

    const mark = states.mark();
    await leader.kill();
    await states.waitFor('SUSPENDED', mark);
    await states.waitFor('RECONNECTED', mark, timing(30_000));
    expect(client.sessionId).toBe(session);
    expect(others.reduce((n, p) => n + p.connectionCount, 0)).toBe(1);
    await cluster.waitForLeader();
    const stat = await client.exists(node);
    expect(stat?.ephemeralOwner).toBe(session);
    await client.setData(root, 'after');
    expect(await events.count(1)).toEqual([`changed ${root}`]);
  });
});

describe('a session the server refuses', () => {
  it('is reported as an authentication failure, once', async () => {
    await using server = await TestingServer.start({ forceSync: false });
    const t = new ProtocolTransport({ connectString: server.connectString, sessionTimeoutMs: 5_000 });
    try {
      await next(t, 'connected');
      const closed = next(t, 'closed');
      const auth = t.addAuth('no-such-scheme', 'x');
      auth.catch(() => undefined);
      expect(await closed).toBe('authFailed');
      await expect(auth).rejects.toMatchObject({ code: 'AUTHFAILED' });
      await expect(t.getData('/')).rejects.toMatchObject({ code: 'AUTHFAILED' });
    } finally {
      await t.close();
    }
  });

  it('ends a client with an AUTHFAILED error', async () => {
    await using server = await TestingServer.start({ forceSync: false });
    const client = clients.create({ transport: 'protocol', connectString: server.connectString, authInfo: [{ scheme: 'no-such-scheme', auth: 'x' }] });
    const states = new StateRecorder(client);
    client.start();
    await expect(client.blockUntilConnected({ timeoutMs: timing(30_000) })).rejects.toMatchObject({ code: 'AUTHFAILED' });
    // The session never counted as connected, so no state tells of it.
    expect(states.states).toEqual([]);
    await expect(client.getData('/')).rejects.toMatchObject({ code: 'AUTHFAILED' });
    await clients.closeAll();
  });
});
