import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ConnectionTimeoutError, type ConnectionStateErrorPolicy } from '../../src';
import { InterProcessMutex } from '../../recipes/locks';
import { StateRecorder, randomRoot, timing } from '../helpers';
import { useZooKeeper } from '../fixture';

describe('client safety', () => {
  const zk = useZooKeeper();
  const proxied = () => zk.startProxy();

  it('blockUntilConnected to an address nobody answers rejects in time, saying where, why and how long', async () => {
    const proxy = await proxied();
    proxy.cut();
    const client = zk.clients.create({ connectString: proxy.connectString });
    client.start();
    const started = performance.now();
    const err = await client.blockUntilConnected({ timeoutMs: 1_000 }).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(1_000 + timing(500));
    expect(err).toBeInstanceOf(ConnectionTimeoutError);
    expect((err as Error).message).toMatch(new RegExp(`^no connection to ${proxy.connectString} within \\d+ ms`));
  });

  it('closing clients whose server does not answer does not block the event loop', async () => {
    const proxy = await proxied();
    const closing = await Promise.all([1, 2, 3].map(() => zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 10_000 })));
    proxy.blackhole();
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const started = performance.now();
    await Promise.all(closing.map((c) => c.close()));
    delay.disable();
    // close() itself is bounded too.
    expect(performance.now() - started).toBeLessThan(timing(2_000));
    // The longest the loop was held, in ms (the histogram counts in ns). A blocking close holds it
    // 1.5 s per client; the bound leaves room for a loaded machine that does not schedule us, and
    // for a major collection in a long-lived test worker.
    expect(delay.max / 1e6).toBeLessThan(timing(1_000));
  });

  it.each<ConnectionStateErrorPolicy>(['standard', 'session'])(
    'a partitioned holder stops trusting its lock before anyone else is granted it (%s policy)',
    async (policy) => {
      const path = `${randomRoot('partition')}/lock`;
      const proxy = await proxied();
      const holderClient = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 4_000, connectionStateErrorPolicy: policy });
      const waiterClient = await zk.clients.connect({ connectString: zk.server.connectString });
      const states = new StateRecorder(holderClient);
      const mark = states.mark();
      const held = await new InterProcessMutex(holderClient, path).acquire();
      let abortedAt = 0;
      held.signal.addEventListener('abort', () => (abortedAt = performance.now()));
      const granted = new InterProcessMutex(waiterClient, path).acquire({ timeoutMs: timing(30_000) }).then((lease) => ({ lease, at: performance.now() }));
      proxy.blackhole();
      const { lease, at } = await granted;
      expect(abortedAt).toBeGreaterThan(0);
      expect(abortedAt).toBeLessThan(at);
      if (policy === 'session') {
        // Under 'session' only LOST aborts the lease: it came before the server gave the lock away.
        await states.waitFor('LOST', mark);
        expect(held.signal.reason).toMatchObject({ reason: 'LOST' });
      }
      await lease.release();
    },
  );
});
