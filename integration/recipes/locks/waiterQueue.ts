import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { InterProcessMutex } from '../../../recipes/locks';
import type { ZkClient } from '../../../src';
import type { TestingServer } from '../../../src/testing';
import { randomRoot, timing } from '../../helpers';
import { everyWaiterWaits, watchCount } from './everyWaiterWaits';

// A full collection on demand: heap figures and WeakRefs mean something only after one.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The JS heap in use after full collections. */
export async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  return process.memoryUsage().heapUsed;
}

/**
 * Queues `n` waiters on a fresh mutex behind a holder, spread over `sessions`; resolves once
 * every waiter waits (see everyWaiterWaits), with a function that releases the holder and waits
 * for the queue to drain.
 */
export async function queueWaiters(server: TestingServer, sessions: readonly ZkClient[], n: number): Promise<{ drain: () => Promise<void> }> {
  const path = `${randomRoot('waiters')}/lock`;
  const holder = await new InterProcessMutex(sessions[0], path).acquire();
  const base = await watchCount(server);
  const held = Array.from({ length: n }, (_, i) =>
    new InterProcessMutex(sessions[i % sessions.length], path).acquire({ timeoutMs: timing(120_000) }).then((lease) => lease.release()),
  );
  const all = Promise.all(held);
  all.catch(() => undefined);
  await everyWaiterWaits(server, sessions, path, n, base);
  return {
    drain: async () => {
      await holder.release();
      await all;
    },
  };
}
