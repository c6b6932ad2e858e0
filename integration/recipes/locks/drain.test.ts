import { InterProcessMutex, type Lease } from '../../../recipes/locks';
import { parseMntr } from '../../../src/testing';
import { eventually, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';

describe('InterProcessMutex: a queue of 1000 waiters', () => {
  const zk = useZooKeeper({ closeClients: 'file' });

  it('drains in node order, one holder at a time, with two requests to the server per hand-off', async () => {
    const path = `${randomRoot('drain')}/lock`;
    const sessions = await Promise.all([0, 1, 2, 3].map(() => zk.clients.connect({ connectString: zk.server.connectString })));
    const holder = await new InterProcessMutex(sessions[0], path).acquire();
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
    await eventually('1000 waiters queued', async () => (await sessions[0].getChildren(path)).length === 1001, timing(60_000), 200);
    const queued = (await new InterProcessMutex(sessions[0], path).getParticipantNodes()).slice(1);
    // Every node is there before every waiter has set its watch: the last reads must not be counted.
    const mntr = async () => parseMntr(await zk.server.fourLetterWord('mntr'));
    await eventually('1000 waiters watching', async () => Number((await mntr()).zk_watch_count) >= 1000, timing(60_000), 200);
    // Some waiters watch their own node too, so the count is reached early: a round trip in every
    // session, twice, takes every join's reply (after which a waiter sends its watches at once)
    // and then every watch's.
    for (let round = 0; round < 2; round++) await Promise.all(sessions.map((s) => s.exists(path)));

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
