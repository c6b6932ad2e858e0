import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { InterProcessMutex } from '../../../recipes/locks';
import type { ZkClient } from '../../../src';
import { parseMntr, type TestingServer } from '../../../src/testing';
import { eventually, randomRoot, timing } from '../../helpers';

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
 * Queues `n` waiters on a fresh mutex behind a holder, spread over `sessions`; resolves once the
 * server holds every waiter's watch, with a function that releases the holder and waits for the
 * queue to drain.
 */
export async function queueWaiters(server: TestingServer, sessions: readonly ZkClient[], n: number): Promise<{ drain: () => Promise<void> }> {
  const watches = async () => Number(parseMntr(await server.fourLetterWord('mntr')).zk_watch_count);
  const path = `${randomRoot('waiters')}/lock`;
  const holder = await new InterProcessMutex(sessions[0], path).acquire();
  const base = await watches();
  const held = Array.from({ length: n }, (_, i) =>
    new InterProcessMutex(sessions[i % sessions.length], path).acquire({ timeoutMs: timing(120_000) }).then((lease) => lease.release()),
  );
  const all = Promise.all(held);
  all.catch(() => undefined);
  // Every waiter's node stands and the server holds at least one watch for each (the node ahead;
  // some waiters watch their own node too, so the count alone says too little). Then a round trip
  // in every session, twice: replies come in order, so the first takes every join's reply (after
  // which a waiter sends its watches at once) and the second every watch's. Only then is every
  // waiter waiting, with nothing of its joining left in the heap.
  await eventually(
    `${n} waiters queued and watching`,
    async () => ((await sessions[0].exists(path))?.numChildren ?? 0) >= n + 1 && (await watches()) >= base + n,
    timing(60_000),
    100,
  );
  for (let round = 0; round < 2; round++) await Promise.all(sessions.map((s) => s.exists(path)));
  return {
    drain: async () => {
      await holder.release();
      await all;
    },
  };
}
