import { InterProcessMutex, LockLostError, LockTimeoutError, type Lease } from '../../../recipes/locks';
import { FaultProxy, TestingServer } from '../../../src/testing';
import { aborted, Clients, StateRecorder, eventually, isWatching, randomRoot, timing } from '../../helpers';

/** The slack a bound may overrun by: timers and the event loop, on a loaded 2-core machine. */
const SLACK_MS = timing(1_000);

type Fault = 'killed' | 'paused' | 'blackholed';

/**
 * Time limits are promises: a call given a timeout returns within it, whatever the network does.
 * Each bound is measured with the server killed, paused (SIGSTOP: connections stay open, nothing
 * answers) and blackholed (the client's connection open, nothing passes).
 */
describe.each<Fault>(['killed', 'paused', 'blackholed'])('lock time limits with the server %s', (fault) => {
  let server: TestingServer;
  let proxy: FaultProxy;
  const clients = new Clients();
  let path: string;

  beforeEach(async () => {
    server = await TestingServer.start({ forceSync: false });
    proxy = await FaultProxy.start(server.connectString);
    path = `${randomRoot('limits')}/lock`;
  });
  afterEach(async () => {
    if (server.isPaused) server.resume();
    await clients.closeAll();
    await proxy.close();
    await server.close();
  });

  /** A client through the proxy, with a session that outlives each bound under test (its read timeout is 4 s). */
  const connect = () => clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 6_000, connectionTimeoutMs: timing(10_000) });

  async function inject(): Promise<void> {
    if (fault === 'killed') await server.kill();
    else if (fault === 'paused') server.pause();
    else proxy.blackhole();
  }

  async function within<T>(boundMs: number, call: () => Promise<T>): Promise<{ outcome: T | unknown; elapsedMs: number }> {
    const started = performance.now();
    const outcome = await call().catch((err: unknown) => err);
    const elapsedMs = performance.now() - started;
    expect(elapsedMs).toBeLessThan(boundMs + SLACK_MS);
    return { outcome, elapsedMs };
  }

  it('acquire({ timeoutMs }) rejects with LockTimeoutError within its bound', async () => {
    const client = await connect();
    const mutex = new InterProcessMutex(client, path);
    await inject();
    const { outcome, elapsedMs } = await within(2_000, () => mutex.acquire({ timeoutMs: 2_000 }));
    expect(outcome).toBeInstanceOf(LockTimeoutError);
    expect(elapsedMs).toBeGreaterThanOrEqual(1_990);
  });

  it('a waiter cut off while it waits rejects with LockTimeoutError within its bound', async () => {
    // The waiter's read timeout (6 s) is well past its bound (3 s): nothing it sends after the fault
    // is answered or fails before the bound, so any request it awaits on the way out would show.
    const holderClient = await clients.connect({ connectString: server.connectString });
    const waiterClient = await clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 9_000, connectionTimeoutMs: timing(10_000) });
    const held = await new InterProcessMutex(holderClient, path).acquire();
    const started = performance.now();
    const waiting = new InterProcessMutex(waiterClient, path).acquire({ timeoutMs: 3_000 }).catch((err: unknown) => err);
    // Queued, and watching the holder's node.
    await eventually('the waiter to watch the holder', () => isWatching(server, held.node, waiterClient.sessionId));
    await inject();
    expect(await waiting).toBeInstanceOf(LockTimeoutError);
    expect(performance.now() - started).toBeLessThan(3_000 + SLACK_MS);
    if (fault !== 'killed' && fault !== 'paused') await held.release();
  });

  it('tryAcquire() resolves undefined within its 1 s bound, and at once once the client knows it is disconnected', async () => {
    const client = await connect();
    const states = new StateRecorder(client);
    const mark = states.mark();
    const mutex = new InterProcessMutex(client, path);
    await inject();
    const { outcome } = await within(1_000, () => mutex.tryAcquire());
    expect(outcome).toBeUndefined();
    // Once the client knows it has no connection, a try answers without a round trip.
    await states.waitFor('SUSPENDED', mark);
    const fast = await within(0, () => mutex.tryAcquire());
    expect(fast.outcome).toBeUndefined();
  });

  it('lease.release() aborts the signal at once and resolves within 1 s', async () => {
    const client = await connect();
    const lease: Lease = await new InterProcessMutex(client, path).acquire();
    const signal = lease.signal;
    await inject();
    const releasing = within(1_000, () => lease.release());
    // Released, or already lost to a SUSPENDED the kill brought first.
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(LockLostError);
    await releasing;
  });
});

describe('huge timeouts', () => {
  let server: TestingServer;
  const clients = new Clients();

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
  });
  afterEach(() => clients.closeAll());
  afterAll(() => server.close());

  it('acquire({ timeoutMs: Number.MAX_SAFE_INTEGER }) waits for the lock instead of ending at once', async () => {
    const path = `${randomRoot('huge')}/lock`;
    const [a, b] = [await clients.connect({ connectString: server.connectString }), await clients.connect({ connectString: server.connectString })];
    const held = await new InterProcessMutex(a, path).acquire();
    let settled = false;
    const waiting = new InterProcessMutex(b, path).acquire({ timeoutMs: Number.MAX_SAFE_INTEGER }).finally(() => (settled = true));
    const lost = aborted(held.signal, timing(2_000)).catch(() => 'kept');
    // The waiter queues and stays queued until the holder lets go.
    for (;;) {
      if ((await a.getChildren(path)).length === 2) break;
      await new Promise((r) => setImmediate(r));
    }
    expect(await lost).toBe('kept');
    expect(settled).toBe(false);
    await held.release();
    const lease = await waiting;
    expect(lease.fencingToken).toBeGreaterThan(held.fencingToken);
    await lease.release();
  });

  it('blockUntilConnected({ timeoutMs: Number.MAX_SAFE_INTEGER }) waits for a server that comes up late', async () => {
    const late = await TestingServer.start({ forceSync: false });
    const port = late.port;
    await late.stop();
    try {
      const client = clients.create({ connectString: `127.0.0.1:${port}` });
      client.start();
      const waiting = client.blockUntilConnected({ timeoutMs: Number.MAX_SAFE_INTEGER });
      await late.start();
      await expect(waiting).resolves.toBeUndefined();
    } finally {
      await late.close();
    }
  });
});
