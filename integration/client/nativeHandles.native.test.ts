import { createHash } from 'node:crypto';
import { Perms } from '../../src';
import { FaultProxy } from '../../src/testing';
import { StateRecorder, randomRoot, timing, watchNode } from '../helpers';
import { useZooKeeper } from '../fixture';

/**
 * The native binding watches the C client's socket with a poll handle it updates only from its own
 * callbacks; a socket the C client closes elsewhere stays registered under its number, and a
 * socket opened meanwhile that gets the number breaks (a crash or a hang). NativeTransport keeps
 * such sockets from being opened; these tests open them at the moments that used to break.
 */
describe('native handles and their sockets', () => {

  const zk = useZooKeeper();

  /** A node with data 'x', made by a direct client (`admin`), and a client that reaches the server through `proxy`. */
  async function behindProxy(proxy: FaultProxy) {
    const root = randomRoot('handles');
    const admin = await zk.clients.connect({ connectString: zk.server.connectString });
    await admin.create(root, { data: 'x' });
    const client = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 9_000 });
    return { root, admin, client, states: new StateRecorder(client) };
  }

  it('a reset found while sending: the handle is replaced, sockets opened at once work, and the session and its node survive', async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const { root, admin, client, states } = await behindProxy(proxy);
    const session = client.sessionId;
    const ours = await client.create(`${root}/ours`, { mode: 'EPHEMERAL' });
    const watch = await watchNode(client, root);
    const mark = states.mark();

    proxy.cut();
    // Sent on the reset connection before the binding has polled it: the C client finds the
    // reset inside this call and closes its socket there.
    const read = client.getData(root);
    // Opened at once: a new handle and a plain Node socket, each of which could get the number of
    // the socket just closed.
    const other = zk.clients.connect({ connectString: zk.server.connectString });
    const srvr = zk.server.fourLetterWord('srvr', timing(5_000));
    await expect(srvr).resolves.toMatch(/Mode: standalone/);
    expect((await other).sessionId).toBeGreaterThan(0n);

    // The watch went with the replaced handle: its owner hears 'notWatching', and can watch again.
    expect(await watch.next).toBe('notWatching');
    await states.waitFor('SUSPENDED', mark);
    proxy.heal();
    await states.waitFor('RECONNECTED', mark);
    expect(client.sessionId).toBe(session);
    expect((await read).data.toString()).toBe('x');
    expect((await admin.exists(ours))?.ephemeralOwner).toBe(session);
  });

  it('a reset found while sending is reported on a later turn, not inside the call that found it', async () => {
    // A recipe's synchronous work (a lease proved, then a release sent) must not see the state
    // change under it: the lease would reach its caller already lost.
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const { root, client, states } = await behindProxy(proxy);
    const mark = states.mark();
    const heardInside: string[] = [];
    let inside = false;
    client.on('stateChanged', (state) => {
      if (inside) heardInside.push(state);
    });

    proxy.cut();
    inside = true;
    const read = client.getData(root);
    inside = false;

    expect(heardInside).toEqual([]);
    await states.waitFor('SUSPENDED', mark);
    proxy.heal();
    await states.waitFor('RECONNECTED', mark);
    expect((await read).data.toString()).toBe('x');
  });

  it('a replacement handle carries the credentials, and tells only watches that were set', async () => {
    const root = randomRoot('handles');
    const digest = createHash('sha1').update('alice:secret').digest('base64');
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const admin = await zk.clients.connect({ connectString: zk.server.connectString });
    await admin.create(root);
    const alice = await zk.clients.connect({
      connectString: proxy.connectString,
      sessionTimeoutMs: 9_000,
      authInfo: [{ scheme: 'digest', auth: 'alice:secret' }],
    });
    const states = new StateRecorder(alice);
    await alice.create(`${root}/secret`, { data: 'hidden' });
    await alice.setACL(`${root}/secret`, [{ perms: Perms.ALL, scheme: 'digest', id: `alice:${digest}` }]);
    // A getData watch on a missing node is never set: its watcher must hear nothing.
    const heard: string[] = [];
    await expect(alice.getData(`${root}/missing`, { watcher: (e) => heard.push(`missing:${e.type}`) })).rejects.toMatchObject({ code: 'NONODE' });
    const watch = await watchNode(alice, root);
    const mark = states.mark();

    proxy.cut();
    const read = alice.getData(`${root}/secret`);
    expect(await watch.next).toBe('notWatching');
    await states.waitFor('SUSPENDED', mark);
    proxy.heal();
    await states.waitFor('RECONNECTED', mark);
    // The read went out again on the replacement handle, which had to present alice's credentials.
    expect((await read).data.toString()).toBe('hidden');
    expect(heard).toEqual([]);
  });

  it('a socket opened by code reacting to SUSPENDED works', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString, sessionTimeoutMs: 3_000 });
    const reacted = new Promise<string>((resolve, reject) => {
      client.on('stateChanged', (state) => {
        // Opened from inside the state listener, as reacting code does.
        if (state !== 'SUSPENDED') return;
        zk.server.resume();
        zk.server.fourLetterWord('srvr', timing(5_000)).then(resolve, reject);
      });
    });
    zk.server.pause();
    expect(await reacted).toMatch(/Mode: standalone/);
  });
});
