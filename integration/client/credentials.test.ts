/**
 * Credentials on a real server, on the transport under test: the first connection counts only once
 * the server has accepted them, and nothing the client holds shows them to `util.inspect`.
 */
import { createHash } from 'node:crypto';
import { inspect } from 'node:util';
import { InterProcessMutex } from '../../recipes/locks';
import { Perms, type ZkClient } from '../../src';
import { transportFactory } from '../../src/client/chooseTransport';
import { FaultProxy } from '../../src/testing';
import type { CloseReason } from '../../src/transport/Transport';
import { StateRecorder, TEST_TRANSPORT, nextEvent, randomRoot, timing } from '../helpers';
import { useZooKeeper } from '../fixture';

/** Every object the client holds its options or credentials in, reached as a debugger or a log line would. */
function holders(client: ZkClient): unknown[] {
  const connection = (client as unknown as { connection: { transportNow: unknown } }).connection;
  return [client, client.options, client.options.authInfo, connection, connection.transportNow, new InterProcessMutex(client, '/lock')];
}

describe('credentials', () => {
  const zk = useZooKeeper();

  it('blockUntilConnected rejects with AUTHFAILED when the server refuses the credentials, and no state says connected', async () => {
    // ZooKeeper 3.8 refuses a scheme it has no provider for.
    const client = zk.clients.create({ connectString: zk.server.connectString, authInfo: [{ scheme: 'no-such-scheme', auth: 'x' }] });
    const states = new StateRecorder(client);
    client.start();
    await expect(client.blockUntilConnected({ timeoutMs: timing(30_000) })).rejects.toMatchObject({ code: 'AUTHFAILED' });
    expect(states.states).toEqual([]);
    expect(client.isConnected).toBe(false);
    await expect(client.getData('/')).rejects.toMatchObject({ code: 'AUTHFAILED' });
    await expect(client.blockUntilConnected({ timeoutMs: timing(1_000) })).rejects.toMatchObject({ code: 'AUTHFAILED' });
  });

  it('one refused scheme among accepted ones is a refusal too', async () => {
    const client = zk.clients.create({
      connectString: zk.server.connectString,
      authInfo: [
        { scheme: 'digest', auth: 'alice:secret' },
        { scheme: 'no-such-scheme', auth: 'x' },
      ],
    });
    client.start();
    await expect(client.blockUntilConnected({ timeoutMs: timing(30_000) })).rejects.toMatchObject({ code: 'AUTHFAILED' });
  });

  it('credentials refused after accepted ones that went out alone: the transport rejects them, though the first reply it read was an acceptance', async () => {
    // The C client completes every add_auth still waiting with the first auth reply it reads. Here
    // that reply is the acceptance of alice's credentials, sent (and seen by the proxy) before the
    // refused ones are even added.
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const t = transportFactory(TEST_TRANSPORT)({ connectString: proxy.connectString, sessionTimeoutMs: 9_000 });
    try {
      const closed = nextEvent<CloseReason>((resolve) => t.on('closed', resolve), 'the transport closing');
      await nextEvent<void>((resolve) => t.on('connected', resolve), 'the transport connecting');
      let refused: Promise<void> | undefined;
      const stopIntercepting = proxy.intercept((chunk, { direction }) => {
        if (direction === 'client->upstream' && refused === undefined && chunk.includes('alice:secret')) {
          refused = t.addAuth('no-such-scheme', 'x');
          refused.catch(() => undefined);
        }
        return 'forward';
      });
      const accepted = t.addAuth('digest', 'alice:secret');
      accepted.catch(() => undefined);
      expect(await closed).toBe('authFailed');
      stopIntercepting();
      expect(refused).toBeDefined();
      await expect(refused).rejects.toMatchObject({ code: 'AUTHFAILED' });
    } finally {
      await t.close();
    }
  });

  it('with accepted credentials, blockUntilConnected resolves once, CONNECTED, and the credentials hold from the first request', async () => {
    const root = randomRoot('auth');
    const digest = createHash('sha1').update('alice:secret').digest('base64');
    const admin = await zk.clients.connect({ connectString: zk.server.connectString });
    await admin.create(root, { data: 'for alice only' });
    await admin.setACL(root, [{ perms: Perms.ALL, scheme: 'digest', id: `alice:${digest}` }]);

    const alice = zk.clients.create({ connectString: zk.server.connectString, authInfo: [{ scheme: 'digest', auth: 'alice:secret' }] });
    const states = new StateRecorder(alice);
    alice.start();
    await alice.blockUntilConnected({ timeoutMs: timing(30_000) });
    expect(states.states).toEqual(['CONNECTED']);
    expect((await alice.getData(root)).data.toString()).toBe('for alice only');
    await expect(admin.getData(root)).rejects.toMatchObject({ code: 'NOAUTH' });
  });

  it('util.inspect at any depth shows no digest password and no session password', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString, authInfo: [{ scheme: 'digest', auth: 'alice:pw-0f5c1e' }] });
    // Hex, upper case from the native binding.
    const sessionPassword = client.getSessionCredentials().sessionPassword.toLowerCase();
    expect(sessionPassword).toMatch(/^[0-9a-f]{32}$/);
    for (const holder of holders(client)) {
      for (const options of [{}, { depth: Infinity }, { depth: Infinity, showHidden: true, getters: true }]) {
        const shown = inspect(holder, options);
        expect(shown).not.toContain('pw-0f5c1e');
        expect(shown.toLowerCase()).not.toContain(sessionPassword);
      }
    }
    // What is shown still says what the client is.
    const shown = inspect(client, { depth: Infinity });
    expect(shown).toContain(zk.server.connectString);
    expect(shown).toContain("scheme: 'digest'");
    expect(shown).toContain('[redacted]');
    expect(shown).toContain(`0x${client.sessionId.toString(16)}`);
  });
});
