import { InterProcessMutex, type Lease } from '../../../recipes/locks';
import { parseMntr } from '../../../src/testing';
import { randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { everyWaiterWaits, watchCount } from './everyWaiterWaits';

describe('InterProcessMutex: a queue of 1000 waiters', () => {
  const zk = useZooKeeper({ closeClients: 'file' });

  it('drains in node order, one holder at a time, with two requests to the server per hand-off', async () => {
    const path = `${randomRoot('drain')}/lock`;
    const sessions = await Promise.all([0, 1, 2, 3].map(() => zk.clients.connect({ connectString: zk.server.connectString })));
    const holder = await new InterProcessMutex(sessions[0], path).acquire();
    const base = await watchCount(zk.server);
    const acquiredNodes: string[] = [];
    let inside = 0;
    let maxInside = 0;
    const waiters: Array<Promise<void>> = [];
    for (let i = 0; i < 1000; i++) {
      const mutex = new InterProcessMutex(sessions[i % 4], path);
      waiters.push(
        mutex.acquire({ timeoutMs: timing(120_000) }).then(async (lease: Lease) => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          acquiredNodes.push(lease.node);
          inside--;
          await lease.release();
        }),
      );
    }
    await everyWaiterWaits(zk.server, sessions, path, 1000, base);
    // Every waiter waits, so no reads of its joining are counted below.
    const queued = (await new InterProcessMutex(sessions[0], path).getParticipantNodes()).slice(1);
    const mntr = async () => parseMntr(await zk.server.fourLetterWord('mntr'));

    const packets = async () => Number((await mntr()).zk_packets_received);
    const before = await packets();
    await holder.release();
    await Promise.all(waiters);
    const perHandOff = ((await packets()) - before - 1) / 1000;
    expect(maxInside).toBe(1);
    expect(acquiredNodes).toEqual(queued);
    // Herd-free: per hand-off the server hears one delete and one read from the woken waiter,
    // whatever the queue length (the extra 1 is the mntr connection itself).
    expect(perHandOff).toBeLessThanOrEqual(2.01);
  });
});
