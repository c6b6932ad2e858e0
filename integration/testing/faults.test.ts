import { expireSession } from '../../src/testing';
import { StateRecorder, randomRoot, timing, watchNode } from '../helpers';
import { useZooKeeper } from '../fixture';

describe('FaultProxy and expireSession against a real server', () => {
  const zk = useZooKeeper({ proxy: 'each' });

  it('cut() disconnects the proxied client only, and heal() reconnects it', async () => {
    const proxied = await zk.clients.connect({ connectString: zk.proxy.connectString });
    const direct = await zk.clients.connect({ connectString: zk.server.connectString });
    const proxiedStates = new StateRecorder(proxied);
    const directStates = new StateRecorder(direct);
    const mark = proxiedStates.mark();
    zk.proxy.cut();
    await proxiedStates.waitFor('SUSPENDED', mark);
    expect(directStates.states).toEqual([]);
    expect(direct.isConnected).toBe(true);
    zk.proxy.heal();
    await proxiedStates.waitFor('RECONNECTED', mark);
    expect(proxiedStates.since(mark)).toEqual(['SUSPENDED', 'RECONNECTED']);
  });

  it('blackhole() makes the client see a disconnect, and heal() reconnects it', async () => {
    // The client drops the connection at two thirds of the session timeout and declares LOST at
    // nine tenths: 12 s leaves it 2.8 s to reconnect after the heal, which load cannot eat (4 s
    // left 0.9 s, less the reconnect wait).
    const client = await zk.clients.connect({ connectString: zk.proxy.connectString, sessionTimeoutMs: 12_000 });
    const states = new StateRecorder(client);
    const session = client.sessionId;
    const mark = states.mark();
    zk.proxy.blackhole();
    // Nothing is refused: pings just go unanswered until the client gives up on the connection.
    await states.waitFor('SUSPENDED', mark, timing(15_000));
    zk.proxy.heal();
    await states.waitFor('RECONNECTED', mark, timing(15_000));
    expect(states.since(mark)).toEqual(['SUSPENDED', 'RECONNECTED']);
    expect(client.sessionId).toBe(session);
  });

  it('expireSession() makes the server delete the session ephemeral nodes', async () => {
    const root = randomRoot();
    const owner = await zk.clients.connect({ connectString: zk.server.connectString });
    const observer = await zk.clients.connect({ connectString: zk.server.connectString });
    await owner.create(root);
    const node = await owner.create(`${root}/e`, { mode: 'EPHEMERAL' });
    const deleted = (await watchNode(observer, node)).next;
    await expireSession(owner);
    expect(await deleted).toBe('deleted');
    expect(await observer.exists(node)).toBeNull();
  });

  it('expireSession() reaches the servers by the address given, for a client behind a cut proxy', async () => {
    const root = randomRoot();
    const owner = await zk.clients.connect({ connectString: zk.proxy.connectString, sessionTimeoutMs: 30_000 });
    const observer = await zk.clients.connect({ connectString: zk.server.connectString });
    await owner.create(root);
    const node = await owner.create(`${root}/e`, { mode: 'EPHEMERAL' });
    const deleted = (await watchNode(observer, node)).next;
    const states = new StateRecorder(owner);
    const mark = states.mark();
    zk.proxy.cut();
    await states.waitFor('SUSPENDED', mark);
    await expireSession(owner, { connectString: zk.server.connectString, timeoutMs: timing(10_000) });
    expect(await deleted).toBe('deleted');
    zk.proxy.heal();
    await states.waitFor('LOST', mark);
  });
});
