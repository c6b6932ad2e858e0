import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestingServer, HarnessSetupError, locateZooKeeper } from '../../src/testing';
import { StateRecorder, randomRoot, timing } from '../helpers';
import { useZooKeeper } from '../fixture';

describe('TestingServer', () => {
  const zk = useZooKeeper();

  it('serves on a loopback port once start() resolves', async () => {
    expect(zk.server.connectString).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(await zk.server.mode()).toBe('standalone');
    const conf = await zk.server.fourLetterWord('conf');
    expect(conf).toMatch(/maxClientCnxns=0/);
  });

  it('port 0 picks a free port, as listen(0) does, and keeps it across a restart', async () => {
    await using picked = await TestingServer.start({ port: 0, forceSync: false });
    expect(picked.port).toBeGreaterThan(0);
    expect(picked.port).not.toBe(zk.server.port);
    expect(await picked.mode()).toBe('standalone');
    const port = picked.port;
    await picked.restart();
    expect(picked.port).toBe(port);
    expect(await picked.mode()).toBe('standalone');
  });

  it('refuses a port out of range before starting anything', async () => {
    await expect(TestingServer.start({ port: 70_000 })).rejects.toThrow(/port must be at most 65535/);
    await expect(TestingServer.start({ port: -1 })).rejects.toThrow(/port must be a non-negative integer/);
  });

  it('keeps data and sessions across stop() and start()', async () => {
    const root = randomRoot();
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const states = new StateRecorder(client);
    await client.create(root, { data: 'kept' });
    const ephemeral = await client.create(`${root}/e`, { mode: 'EPHEMERAL' });
    const session = client.sessionId;

    const mark = states.mark();
    await zk.server.stop();
    expect(zk.server.isRunning).toBe(false);
    await states.waitFor('SUSPENDED', mark);
    await zk.server.start();
    await states.waitFor('RECONNECTED', mark);

    expect(states.since(mark)).toEqual(['SUSPENDED', 'RECONNECTED']);
    expect(client.sessionId).toBe(session);
    expect((await client.getData(root)).data.toString()).toBe('kept');
    expect((await client.exists(ephemeral))?.ephemeralOwner).toBe(session);
  });

  it('restart() keeps the session too', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const states = new StateRecorder(client);
    const session = client.sessionId;
    const mark = states.mark();
    await zk.server.restart();
    await states.waitFor('RECONNECTED', mark);
    expect(client.sessionId).toBe(session);
  });

  it('kill() is a SIGKILL, and the data survives it', async () => {
    const root = randomRoot();
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const states = new StateRecorder(client);
    await client.create(root, { data: 'durable' });
    const mark = states.mark();
    await zk.server.kill();
    expect(zk.server.isRunning).toBe(false);
    await states.waitFor('SUSPENDED', mark);
    await zk.server.start();
    await states.waitFor('RECONNECTED', mark);
    expect((await client.getData(root)).data.toString()).toBe('durable');
  });

  it('pause() freezes the server until resume()', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString, sessionTimeoutMs: 3_000 });
    const states = new StateRecorder(client);
    const mark = states.mark();
    zk.server.pause();
    expect(zk.server.isPaused).toBe(true);
    expect(await zk.server.mode()).toBeUndefined();
    // The client hears nothing back and declares the connection lost.
    await states.waitFor('SUSPENDED', mark, timing(15_000));
    zk.server.resume();
    expect(await zk.server.mode()).toBe('standalone');
    await states.waitFor('RECONNECTED', mark, timing(15_000));
  });
});

describe('locating ZooKeeper', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('names the install command when there is no installation', () => {
    const empty = mkdtempSync(join(tmpdir(), 'no-zk-'));
    try {
      process.env.ZOOKEEPER_HOME = empty;
      delete process.env.ZOOKEEPER_CLASSPATH;
      expect(() => locateZooKeeper()).toThrow(HarnessSetupError);
      expect(() => locateZooKeeper()).toThrow(/apt-get install -y zookeeper/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('names the install command when there is no Java', () => {
    process.env.ZOOKEEPER_CLASSPATH = '/usr/share/java/zookeeper.jar';
    process.env.JAVA_HOME = '/nonexistent-java-home';
    process.env.PATH = '/nonexistent-bin';
    expect(() => locateZooKeeper()).toThrow(/Java was not found.*apt-get install -y default-jre-headless/);
  });
});
