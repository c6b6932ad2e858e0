/**
 * Golden bytes: the protocol transport sends, byte for byte, what the ZooKeeper Java client sends
 * for the same calls: test/protocol/javaClient.json, captured from Debian's zookeeper.jar 3.8 by
 * test/protocol/captureJavaClient.ts (which regenerates it). The fake server answers with the
 * session, password and zxids the real server gave the Java client, so that even the reconnect's
 * handshake and SetWatches2 must match.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPEN_ACL, type Watcher } from '../transport/Transport';
import { ScriptedServer, type ScriptedConnection } from '../../test/protocol/ScriptedServer';
import { JuteReader } from './jute';
import { ProtocolTransport } from './ProtocolTransport';
import { ConnectRequestRecord } from './records';

interface Fixture {
  frames: Array<{ name: string; hex: string }>;
}

const fixture = JSON.parse(readFileSync(join(__dirname, '..', '..', 'test', 'protocol', 'javaClient.json'), 'utf8')) as Fixture;
const java = new Map(fixture.frames.map((f) => [f.name, f.hex]));

function hexOf(c: ScriptedConnection, index: number): string {
  const body = c.received[index].body;
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length);
  return Buffer.concat([length, body]).toString('hex');
}

/** Waits until `c` has received `n` frames. */
async function received(c: ScriptedConnection, n: number): Promise<void> {
  for (let i = 0; i < 500 && c.received.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  expect(c.received.length).toBeGreaterThanOrEqual(n);
}

describe('golden bytes: the Java client sends the same', () => {
  let server: ScriptedServer;
  let t: ProtocolTransport;
  beforeEach(async () => {
    server = await ScriptedServer.start();
  });
  afterEach(async () => {
    await server.close();
    await t?.close();
  });

  it('for the handshake, the requests, a reconnect with credentials and watches, and the close', async () => {
    const reconnect = ConnectRequestRecord.read(new JuteReader(Buffer.from(java.get('reconnect') as string, 'hex'), 4));
    t = new ProtocolTransport({ connectString: server.connectString, sessionTimeoutMs: 10_000 });
    const first = await server.next();
    // The session the real server gave the Java client.
    await first.handshake({ sessionId: reconnect.sessionId, password: reconnect.passwd, timeOut: 10_000 });
    first.missing.add('/golden/missing');
    first.autoReply();
    const hello = Buffer.from('hello');
    const ignore: Watcher = () => undefined;
    await t.addAuth('digest', 'user:secret');
    await t.create('/golden', hello, 'PERSISTENT', OPEN_ACL);
    await t.create('/golden/e-', Buffer.alloc(0), 'EPHEMERAL_SEQUENTIAL', OPEN_ACL);
    await t.create('/golden/ttl', hello, 'PERSISTENT_WITH_TTL', OPEN_ACL, 60_000);
    await t.create('/golden/c', Buffer.alloc(0), 'CONTAINER', OPEN_ACL);
    await t.create2('/golden/s', hello, 'PERSISTENT', OPEN_ACL);
    await t.getData('/golden', ignore);
    await t.exists('/golden/missing', ignore);
    await t.getChildren('/golden', ignore);
    // The last reply before the drop carries the zxid the Java client saw last.
    first.zxid = reconnect.lastZxidSeen - 1n;
    await t.addWatch('/golden/s', 'PERSISTENT_RECURSIVE', ignore);
    const before = ['connect', 'auth', 'create', 'createEphemeralSequential', 'createTTL', 'createContainer', 'create2', 'getDataWatch', 'existsWatch', 'getChildren2Watch', 'addWatchRecursive'];
    expect(before.map((_, i) => hexOf(first, i))).toEqual(before.map((name) => java.get(name)));

    first.reset();
    const second = await server.next();
    await second.handshake({ sessionId: reconnect.sessionId, password: reconnect.passwd, timeOut: 10_000 });
    second.autoReply();
    await received(second, 3);
    await t.setData('/golden', Buffer.from('world'), 0);
    await t.multi([
      { type: 'check', path: '/golden', version: 1 },
      { type: 'create', path: '/golden/m', data: hello, mode: 'PERSISTENT', acl: OPEN_ACL },
      { type: 'setData', path: '/golden/m', data: hello, version: -1 },
      { type: 'delete', path: '/golden/m', version: -1 },
    ]);
    await t.multiRead([
      { type: 'getData', path: '/golden' },
      { type: 'getChildren', path: '/golden' },
    ]);
    await t.sync('/golden');
    await t.getACL('/golden');
    await t.setACL('/golden/s', [{ perms: 31, scheme: 'digest', id: 'user:Ia2QuK8bY0ErWSYaXGDSjhAbo+U=' }], -1);
    await t.getEphemerals('/');
    await t.getAllChildrenNumber('/golden');
    await t.whoAmI();
    // The Java client removes one watcher with checkWatches; the transport sends the same request
    // for checkWatches (its removeWatches of a last watcher takes the server's watch away too).
    await t.checkWatches('/golden/missing', 'data', ignore);
    await t.removeWatches('/golden/s', 'any');
    await t.delete('/golden/s', -1);
    await t.close();
    const after = [
      'reconnect',
      'reconnectAuth',
      'reconnectSetWatches2',
      'setData',
      'multi',
      'multiRead',
      'sync',
      'getACL',
      'setACL',
      'getEphemerals',
      'getAllChildrenNumber',
      'whoAmI',
      'checkWatches',
      'removeWatches',
      'delete',
      'closeSession',
    ];
    expect(after.map((_, i) => hexOf(second, i))).toEqual(after.map((name) => java.get(name)));
  });
});
