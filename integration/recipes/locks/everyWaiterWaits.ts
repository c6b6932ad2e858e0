import type { ZkClient } from '../../../src';
import { parseMntr, type TestingServer } from '../../../src/testing';
import { eventually, timing } from '../../helpers';

/** The watches `server` holds now (zk_watch_count). */
export async function watchCount(server: TestingServer): Promise<number> {
  return Number(parseMntr(await server.fourLetterWord('mntr')).zk_watch_count);
}

/**
 * Resolves once each of `n` waiters queued on the mutex at `path` behind a holder, from
 * `sessions`, waits: its node stands, and the server holds at least one watch for each beyond
 * `baseWatches` (the node ahead; some waiters watch their own node too, so the count alone says
 * too little). Then a round trip in every session, twice: replies come in order, so the first
 * takes every join's reply (after which a waiter sends its watches at once) and the second every
 * watch's. Only then is every waiter waiting, with nothing of its joining left in the heap.
 */
export async function everyWaiterWaits(server: TestingServer, sessions: readonly ZkClient[], path: string, n: number, baseWatches: number): Promise<void> {
  await eventually(
    `${n} waiters queued and watching`,
    async () => ((await sessions[0].exists(path))?.numChildren ?? 0) >= n + 1 && (await watchCount(server)) >= baseWatches + n,
    timing(60_000),
    100,
  );
  for (let round = 0; round < 2; round++) await Promise.all(sessions.map((s) => s.exists(path)));
}
