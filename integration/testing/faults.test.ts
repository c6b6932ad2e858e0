import { FaultProxy, TestingServer, expireSession } from '../../src/testing';
import { Clients, StateRecorder, randomRoot, timing, watchNode } from '../helpers';

describe('FaultProxy and expireSession against a real server', () => {
  let server: TestingServer;
  let proxy: FaultProxy;
  const clients = new Clients();

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
  });
  beforeEach(async () => {
    proxy = await FaultProxy.start(server.connectString);
  });
  afterEach(async () => {
    await clients.closeAll();
    await proxy.close();
  });
  afterAll(() => server.close());

  it('cut() disconnects the proxied client only, and heal() reconnects it', async () => {
    const proxied = await clients.connect({ connectString: proxy.connectString });
    const direct = await clients.connect({ connectString: server.connectString });
    const proxiedStates = new StateRecorder(proxied);
    const directStates = new StateRecorder(direct);
    const mark = proxiedStates.mark();
    proxy.cut();
    await proxiedStates.waitFor('SUSPENDED', mark);
    expect(directStates.states).toEqual([]);
    expect(direct.isConnected).toBe(true);
    proxy.heal();
    await proxiedStates.waitFor('RECONNECTED', mark);
    expect(proxiedStates.since(mark)).toEqual(['SUSPENDED', 'RECONNECTED']);
  });

  it('blackhole() makes the client see a disconnect, and heal() reconnects it', async () => {
    // The client drops the connection at two thirds of the session timeout and declares LOST at
    // nine tenths: 12 s leaves it 2.8 s to reconnect after the heal, which load cannot eat (4 s
    // left 0.9 s, less the reconnect wait).
    const client = await clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 12_000 });
    const states = new StateRecorder(client);
    const session = client.sessionId;
    const mark = states.mark();
    proxy.blackhole();
    // Nothing is refused: pings just go unanswered until the client gives up on the connection.
    await states.waitFor('SUSPENDED', mark, timing(15_000));
    proxy.heal();
    await states.waitFor('RECONNECTED', mark, timing(15_000));
    expect(states.since(mark)).toEqual(['SUSPENDED', 'RECONNECTED']);
    expect(client.sessionId).toBe(session);
  });

  it('expireSession() makes the server delete the session ephemeral nodes', async () => {
    const root = randomRoot();
    const owner = await clients.connect({ connectString: server.connectString });
    const observer = await clients.connect({ connectString: server.connectString });
    await owner.create(root);
    const node = await owner.create(`${root}/e`, { mode: 'EPHEMERAL' });
    const deleted = (await watchNode(observer, node)).next;
    await expireSession(owner);
    expect(await deleted).toBe('deleted');
    expect(await observer.exists(node)).toBeNull();
  });

  it('expireSession() reaches the servers by the address given, for a client behind a cut proxy', async () => {
    const root = randomRoot();
    const owner = await clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 30_000 });
    const observer = await clients.connect({ connectString: server.connectString });
    await owner.create(root);
    const node = await owner.create(`${root}/e`, { mode: 'EPHEMERAL' });
    const deleted = (await watchNode(observer, node)).next;
    const states = new StateRecorder(owner);
    const mark = states.mark();
    proxy.cut();
    await states.waitFor('SUSPENDED', mark);
    await expireSession(owner, { connectString: server.connectString, timeoutMs: timing(10_000) });
    expect(await deleted).toBe('deleted');
    proxy.heal();
    await states.waitFor('LOST', mark);
  });
});
