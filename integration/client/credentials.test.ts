/**
 * Credentials on a real server, on the transport under test: the first connection counts only once
 * the server has accepted them.
 */
import { createHash } from 'node:crypto';
import { Perms } from '../../src';
import { TestingServer } from '../../src/testing';
import { Clients, StateRecorder, randomRoot, timing } from '../helpers';

describe('credentials', () => {
  let server: TestingServer;
  const clients = new Clients();

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
  });
  afterEach(() => clients.closeAll());
  afterAll(() => server?.close());

  it('blockUntilConnected rejects with AUTHFAILED when the server refuses the credentials, and no state says connected', async () => {
    // ZooKeeper 3.8 refuses a scheme it has no provider for.
    const client = clients.create({ connectString: server.connectString, authInfo: [{ scheme: 'no-such-scheme', auth: 'x' }] });
    const states = new StateRecorder(client);
    client.start();
    await expect(client.blockUntilConnected({ timeoutMs: timing(30_000) })).rejects.toMatchObject({ code: 'AUTHFAILED' });
    expect(states.states).toEqual([]);
    expect(client.isConnected).toBe(false);
    await expect(client.getData('/')).rejects.toMatchObject({ code: 'AUTHFAILED' });
    await expect(client.blockUntilConnected({ timeoutMs: timing(1_000) })).rejects.toMatchObject({ code: 'AUTHFAILED' });
  });

  it('one refused scheme among accepted ones is a refusal too', async () => {
    const client = clients.create({
      connectString: server.connectString,
      authInfo: [
        { scheme: 'digest', auth: 'alice:secret' },
        { scheme: 'no-such-scheme', auth: 'x' },
      ],
    });
    client.start();
    await expect(client.blockUntilConnected({ timeoutMs: timing(30_000) })).rejects.toMatchObject({ code: 'AUTHFAILED' });
  });

  it('with accepted credentials, blockUntilConnected resolves once, CONNECTED, and the credentials hold from the first request', async () => {
    const root = randomRoot('auth');
    const digest = createHash('sha1').update('alice:secret').digest('base64');
    const admin = await clients.connect({ connectString: server.connectString });
    await admin.create(root, { data: 'for alice only' });
    await admin.setACL(root, [{ perms: Perms.ALL, scheme: 'digest', id: `alice:${digest}` }]);

    const alice = clients.create({ connectString: server.connectString, authInfo: [{ scheme: 'digest', auth: 'alice:secret' }] });
    const states = new StateRecorder(alice);
    alice.start();
    await alice.blockUntilConnected({ timeoutMs: timing(30_000) });
    expect(states.states).toEqual(['CONNECTED']);
    expect((await alice.getData(root)).data.toString()).toBe('for alice only');
    await expect(admin.getData(root)).rejects.toMatchObject({ code: 'NOAUTH' });
  });
});
