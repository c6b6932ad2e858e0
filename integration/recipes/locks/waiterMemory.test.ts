import type { ZkClient } from '../../../src';
import { useZooKeeper } from '../../fixture';
import { queueWaiters, settledHeap } from './waiterQueue';

describe('InterProcessMutex: what a waiting waiter keeps', () => {
  const zk = useZooKeeper({ closeClients: 'file' });
  let sessions: ZkClient[];
  /** Every listing the lock core received, held weakly. */
  const listings: Array<WeakRef<string[]>> = [];

  beforeAll(async () => {
    sessions = await Promise.all([0, 1].map(() => zk.clients.connect({ connectString: zk.server.connectString })));
    // Wrapped by hand: a jest mock would keep every result, and the listings with them.
    for (const s of sessions) {
      const createAndList = s.createAndListParent.bind(s);
      s.createAndListParent = async (...args) => {
        const created = await createAndList(...args);
        listings.push(new WeakRef(created.children));
        return created;
      };
      const list = s.getChildrenOfBuilt.bind(s);
      s.getChildrenOfBuilt = async (...args) => {
        const listed = await list(...args);
        listings.push(new WeakRef(listed.children));
        return listed;
      };
    }
  });

  it('keeps no listing while it waits', async () => {
    const { drain } = await queueWaiters(zk.server, sessions, 50);
    await settledHeap();
    const kept = listings.filter((l) => l.deref() !== undefined).length;
    await drain();
    expect(listings.length).toBeGreaterThanOrEqual(50);
    expect(kept).toBe(0);
  });
});
