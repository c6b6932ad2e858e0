import type { ZkClient } from '../../../src';
import { useZooKeeper } from '../../fixture';
import { queueWaiters, settledHeap } from './waiterQueue';

// On the protocol transport only: on the native binding a waiter's heap still grows with the
// queue, for reasons of the binding's own (its pending calls), not the listing.
describe('InterProcessMutex on the protocol transport: the heap of a waiting waiter', () => {
  const zk = useZooKeeper({ closeClients: 'file' });
  let sessions: ZkClient[];

  beforeAll(async () => {
    sessions = await Promise.all([0, 1].map(() => zk.clients.connect({ connectString: zk.server.connectString })));
  });

  it('stays near 10 kB per waiter in a queue of 1000', async () => {
    // Loads and compiles every path a wait takes, optimized code included, so that what grows
    // below is the waiters'.
    await (await queueWaiters(zk.server, sessions, 1000)).drain();
    const before = await settledHeap();
    const { drain } = await queueWaiters(zk.server, sessions, 1000);
    const perWaiter = ((await settledHeap()) - before) / 1000;
    await drain();
    // When each waiter kept its own listing, a waiter cost 58 kB in a queue of 1000 (14 kB in one
    // of 100); now about 10 kB, as in a short queue. A ratio of short to long queues is no
    // better a test: the short queue's few hundred kB are within what the heap's leftovers swing.
    expect(perWaiter).toBeLessThan(20 * 1024);
  });
});
