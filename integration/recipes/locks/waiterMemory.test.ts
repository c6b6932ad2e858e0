import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { InterProcessMutex } from '../../../recipes/locks';
import type { ZkClient } from '../../../src';
import { TestingServer, parseMntr } from '../../../src/testing';
import { Clients, eventually, randomRoot, timing } from '../../helpers';

// A full collection on demand: heap figures and WeakRefs mean something only after one.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  return process.memoryUsage().heapUsed;
}

describe('InterProcessMutex: what a waiting waiter keeps', () => {
  let server: TestingServer;
  const clients = new Clients();
  let sessions: ZkClient[];
  /** Every listing the lock core received, held weakly. */
  const listings: Array<WeakRef<string[]>> = [];

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    sessions = await Promise.all([0, 1].map(() => clients.connect({ connectString: server.connectString })));
    // Wrapped by hand: a jest mock would keep every result, and the listings with them.
    for (const s of sessions) {
      const createAndList = s.createAndListParent.bind(s);
      s.createAndListParent = async (...args) => {
        const created = await createAndList(...args);
        listings.push(new WeakRef(created.children));
        return created;
      };
      const list = s.getChildrenWithStat.bind(s);
      s.getChildrenWithStat = async (...args) => {
        const listed = await list(...args);
        listings.push(new WeakRef(listed.children));
        return listed;
      };
    }
  });
  afterAll(async () => {
    await clients.closeAll();
    await server.close();
  });

  const watches = async () => Number(parseMntr(await server.fourLetterWord('mntr')).zk_watch_count);

  /** Queues `n` waiters behind a holder; resolves once every one watches, with the heap then and a function that drains the queue. */
  async function queue(n: number): Promise<{ drain: () => Promise<void> }> {
    const path = `${randomRoot('waiters')}/lock`;
    const holder = await new InterProcessMutex(sessions[0], path).acquire();
    const base = await watches();
    const held = Array.from({ length: n }, (_, i) =>
      new InterProcessMutex(sessions[i % sessions.length], path).acquire({ timeoutMs: timing(120_000) }).then((lease) => lease.release()),
    );
    const all = Promise.all(held);
    all.catch(() => undefined);
    await eventually(`${n} waiters watching`, async () => (await watches()) >= base + n, timing(60_000), 100);
    return {
      drain: async () => {
        await holder.release();
        await all;
      },
    };
  }

  it('keeps no listing while it waits', async () => {
    listings.length = 0;
    const { drain } = await queue(50);
    await settledHeap();
    const kept = listings.filter((l) => l.deref() !== undefined).length;
    await drain();
    expect(listings.length).toBeGreaterThanOrEqual(50);
    expect(kept).toBe(0);
  });

  it('costs the same heap per waiter in a queue ten times longer', async () => {
    // Loads and compiles every path a wait takes, so that what grows below is the waiters'.
    await (await queue(50)).drain();
    const perWaiter = async (n: number) => {
      const before = await settledHeap();
      const { drain } = await queue(n);
      const after = await settledHeap();
      await drain();
      return (after - before) / n;
    };
    const short = await perWaiter(50);
    const long = await perWaiter(500);
    // When each waiter kept its own listing, a waiter at 500 cost 2.3 times one at 50; now 1.1.
    expect(long / short).toBeLessThan(1.5);
  });
});
