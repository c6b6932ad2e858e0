/**
 * TLS to a real server's secureClientPort (ZooKeeper's Netty connection factory), with a
 * certificate made for the test by the JDK's keytool.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { inspect } from 'node:util';
import { ProtocolTransport } from '../../src/protocol/ProtocolTransport';
import { TestingServer, freePorts } from '../../src/testing';
import { locateZooKeeper } from '../../src/testing/installation';
import { Clients, nextEvent, randomRoot, timing } from '../helpers';

describe('TLS', () => {
  const clients = new Clients();
  let server: TestingServer;
  let dir: string;
  let securePort: number;
  let ca: Buffer;
  const classpath = process.env.ZOOKEEPER_CLASSPATH;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'zk-tls-'));
    const keytool = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'keytool') : 'keytool';
    const store = (...args: string[]) => execFileSync(keytool, [...args, '-storetype', 'PKCS12', '-storepass', 'secret'], { stdio: 'pipe' });
    store('-genkeypair', '-alias', 'zk', '-keyalg', 'EC', '-groupname', 'secp256r1', '-dname', 'CN=localhost', '-ext', 'SAN=IP:127.0.0.1,DNS:localhost', '-validity', '2', '-keystore', join(dir, 'server.p12'), '-keypass', 'secret');
    ca = store('-exportcert', '-alias', 'zk', '-rfc', '-keystore', join(dir, 'server.p12'));
    writeFileSync(join(dir, 'ca.pem'), ca);
    store('-importcert', '-alias', 'ca', '-noprompt', '-file', join(dir, 'ca.pem'), '-keystore', join(dir, 'trust.p12'));
    // Debian's zookeeper.jar lists Netty's handler but not the codec it needs.
    const install = locateZooKeeper();
    if (install.source === 'debian') {
      process.env.ZOOKEEPER_CLASSPATH = [install.classpath, ...['netty-codec', 'netty-resolver'].map((j) => `/usr/share/java/${j}.jar`)].join(delimiter);
    }
    [securePort] = await freePorts(1);
    server = await TestingServer.start({
      forceSync: false,
      config: {
        serverCnxnFactory: 'org.apache.zookeeper.server.NettyServerCnxnFactory',
        secureClientPort: securePort,
        secureClientPortAddress: '127.0.0.1',
        'ssl.keyStore.location': join(dir, 'server.p12'),
        'ssl.keyStore.password': 'secret',
        'ssl.keyStore.type': 'PKCS12',
        'ssl.trustStore.location': join(dir, 'trust.p12'),
        'ssl.trustStore.password': 'secret',
        'ssl.trustStore.type': 'PKCS12',
        'ssl.clientAuth': 'none',
      },
    });
  });
  afterAll(async () => {
    await clients.closeAll();
    await server?.close();
    if (classpath === undefined) delete process.env.ZOOKEEPER_CLASSPATH;
    else process.env.ZOOKEEPER_CLASSPATH = classpath;
    rmSync(dir, { recursive: true, force: true });
  });

  it('a client connects to the secure port with the server certificate, and works', async () => {
    const root = randomRoot('tls');
    const client = await clients.connect({ transport: 'protocol', connectString: `127.0.0.1:${securePort}`, tls: { ca } });
    await client.create(root, { data: 'over TLS' });
    expect((await client.getData(root)).data.toString()).toBe('over TLS');
    const plain = await clients.connect({ connectString: server.connectString });
    expect((await plain.getData(root)).data.toString()).toBe('over TLS');
  });

  it('util.inspect at any depth shows no TLS key, passphrase or digest password of a connected client', async () => {
    const passphrase = 'pass-7d21c9';
    const { privateKey } = generateKeyPairSync('ec', {
      namedCurve: 'prime256v1',
      privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    // A line of the key's base64, which no redaction of a whole string could leave behind.
    const keyLine = privateKey.split('\n')[2];
    const client = await clients.connect({
      transport: 'protocol',
      connectString: `127.0.0.1:${securePort}`,
      tls: { ca, key: privateKey, passphrase },
      authInfo: [{ scheme: 'digest', auth: 'alice:pw-93be0a' }],
    });
    await client.exists('/');
    const connection = (client as unknown as { connection: { transportNow: unknown } }).connection;
    for (const holder of [client, client.options, client.options.tls, connection, connection.transportNow]) {
      for (const options of [{}, { depth: Infinity }, { depth: Infinity, showHidden: true, getters: true }]) {
        const shown = inspect(holder, options);
        for (const secret of [keyLine, passphrase, 'pw-93be0a']) expect(shown).not.toContain(secret);
      }
    }
    expect(inspect(client.options.tls)).toContain("key: '[redacted]'");
    // The copy the client keeps still connects: the key and passphrase are there, only not shown.
    expect(client.options.tls?.key).toBe(privateKey);
  });

  it('a server whose certificate is not trusted is a failed attempt, named in lastConnectError', async () => {
    const t = new ProtocolTransport({ connectString: `127.0.0.1:${securePort}`, sessionTimeoutMs: 5_000, tls: {} });
    try {
      const cause = await nextEvent<Error | undefined>((done) => t.on('connecting', done), 'a failed attempt', timing(10_000));
      expect(String(cause)).toMatch(/self.signed|certificate/i);
      expect(t.lastConnectError?.message).toContain(`127.0.0.1:${securePort}`);
    } finally {
      await t.close();
    }
  });
});
