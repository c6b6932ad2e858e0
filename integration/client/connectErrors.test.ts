import debug from 'debug';
import { format } from 'node:util';
import { ConnectionTimeoutError } from '../../src';
import { TestingServer, freePorts } from '../../src/testing';
import { Clients, timing } from '../helpers';
import { SourceAddressProxy } from '../security/sourceAddressProxy';

/** Collects what `DEBUG=<namespaces>` would print, while `run` runs. */
async function debugLines(namespaces: string, run: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const saved = { log: debug.log, namespaces: debug.disable() };
  debug.log = (...args: unknown[]) => lines.push(format(...args));
  debug.enable(namespaces);
  try {
    await run();
  } finally {
    debug.log = saved.log;
    debug.disable();
    if (saved.namespaces) debug.enable(saved.namespaces);
  }
  return lines;
}

describe('connection failures explain themselves', () => {
  const clients = new Clients();
  afterEach(() => clients.closeAll());

  it('a host that does not exist: the error and the debug lines say so, with the connect string and the time waited', async () => {
    const client = clients.create({ connectString: 'nosuchhost.invalid:2181' });
    let error: unknown;
    const lines = await debugLines('zk-recipes:*', async () => {
      client.start();
      error = await client.blockUntilConnected({ timeoutMs: timing(1_500) }).catch((err: unknown) => err);
    });
    expect(error).toBeInstanceOf(ConnectionTimeoutError);
    const message = (error as Error).message;
    expect(message).toContain('nosuchhost.invalid:2181');
    expect(message).toMatch(/within \d+ ms/);
    expect(message).toMatch(/not ?found/i);
    expect(lines.some((line) => line.includes('nosuchhost.invalid:2181') && /not ?found/i.test(line))).toBe(true);
  });

  it('a host that does not resolve is looked up again: a DNS failure at start-up does not last', async () => {
    const client = clients.create({ connectString: 'nosuchhost.invalid:2181', sessionTimeoutMs: 2_000 });
    const lines = await debugLines('zk-recipes:client', async () => {
      client.start();
      await expect(client.blockUntilConnected({ timeoutMs: timing(2_500) })).rejects.toThrow(ConnectionTimeoutError);
    });
    expect(lines.filter((line) => /connecting to nosuchhost\.invalid:2181: .*not ?found/i.test(line)).length).toBeGreaterThanOrEqual(2);
  });

  it('a port nobody listens on: the error says the connection was refused', async () => {
    const [port] = await freePorts(1);
    const client = clients.create({ connectString: `127.0.0.1:${port}` });
    client.start();
    const error = await client.blockUntilConnected({ timeoutMs: timing(1_500) }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ConnectionTimeoutError);
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    expect((error as Error).message).toMatch(/refused/i);
  });

  it('a client started before its server connects soon after the server comes up, not a third of a session timeout later', async () => {
    // The server is serving before the client's port opens, through a relay: a ZooKeeper that is
    // still starting can leave a connection it refuses open and unanswered (3.8 fails to close
    // it), and the client would then wait out its attempt, not the delay between attempts that
    // this test measures.
    await using server = await TestingServer.start({ forceSync: false });
    const [port] = await freePorts(1);
    // A long session timeout: the C client's own next attempt would come 10 s after a refusal.
    const client = clients.create({ connectString: `127.0.0.1:${port}`, sessionTimeoutMs: 30_000 });
    client.start();
    await expect(client.blockUntilConnected({ timeoutMs: timing(1_000) })).rejects.toThrow(/refused/i);
    const relay = await SourceAddressProxy.start({ host: '127.0.0.1', port: server.port }, '127.0.0.1', port);
    try {
      const startedAt = performance.now();
      // The transports try again every second or so; 6 s is still well short of the 10 s to beat.
      await client.blockUntilConnected({ timeoutMs: timing(6_000) });
      expect(performance.now() - startedAt).toBeLessThan(timing(6_000));
      expect(client.sessionId).not.toBe(0n);
      await client.close();
    } finally {
      await relay.close();
    }
  });
});
