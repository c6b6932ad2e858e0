/**
 * A process of its own for the `waiters` scenario: queues W waiters on one mutex behind a holder,
 * spread over a few sessions, and prints one JSON line with the process's memory (after full
 * garbage collections) before the waiters queue and once every one of them waits with its watch
 * on the server; then it lets the queue drain and checks every waiter held the lock, alone.
 *
 * Usage: node --expose-gc -r ts-node/register/transpile-only waiterMemoryChild.ts <connectString> <protocol|native> <waiters> <sessions> <path>
 */
import { InterProcessMutex } from '../../recipes/locks';
import { ZkClient } from '../../src';
import type { TransportName } from '../../src/client/chooseTransport';
import { ServerProbe } from '../server';
import { HoldCounter } from './clock';
import { settle, snapshotIfAsked } from './heap';

/** Waiters queued and drained once before the measurement, so that what grows after is the waiters' and not code loading or JIT. */
const WARM_UP_WAITERS = 50;

/** Queues `waiters` behind a holder; resolves once all are armed, with the release that drains them. */
async function queue(clients: ZkClient[], probe: ServerProbe, path: string, waiters: number, counter: HoldCounter): Promise<() => Promise<void>> {
  const first = await new InterProcessMutex(clients[0], path).acquire();
  counter.enter();
  const base = await probe.watches();
  const held: Array<Promise<void>> = [];
  for (let k = 0; k < waiters; k++) {
    const mutex = new InterProcessMutex(clients[k % clients.length], path);
    held.push(
      (async () => {
        const lease = await mutex.acquire();
        counter.enter();
        counter.leave();
        await lease.release();
      })(),
    );
  }
  const all = Promise.all(held);
  all.catch(() => undefined);
  // Every waiter watches the node ahead of it (some their own node too, so the count alone says
  // too little): once every waiter's node stands and the server holds that many, a round trip in
  // every session, twice. Replies come in order: the first takes every join's reply (after which
  // a waiter sends its watches at once), the second every watch's. Then every waiter waits.
  await probe.waitForWatches(base + waiters, 120_000 + waiters * 200);
  const deadline = Date.now() + 120_000;
  while (((await clients[0].exists(path))?.numChildren ?? 0) < waiters + 1) {
    if (Date.now() > deadline) throw new Error(`not all ${waiters} waiters joined the line`);
    await new Promise((r) => setTimeout(r, 25));
  }
  for (let round = 0; round < 2; round++) await Promise.all(clients.map((c) => c.exists(path)));
  return async () => {
    counter.leave();
    await first.release();
    await all;
  };
}

async function main(): Promise<void> {
  const [connectString, transport, waitersArg, sessionsArg, path] = process.argv.slice(2);
  const waiters = Number(waitersArg);
  const probe = ServerProbe.forConnectString(connectString);
  const clients = Array.from({ length: Number(sessionsArg) }, () => new ZkClient({ connectString, sessionTimeoutMs: 30_000, transport: transport as TransportName }));
  for (const c of clients) c.start();
  await Promise.all(clients.map((c) => c.blockUntilConnected({ timeoutMs: 60_000 })));
  const counter = new HoldCounter();
  await (await queue(clients, probe, `${path}-warmup`, WARM_UP_WAITERS, counter))();
  const holder = await new InterProcessMutex(clients[0], `${path}-base`).acquire();
  await holder.release();
  const before = await settle();
  const drain = await queue(clients, probe, path, waiters, counter);
  const after = await settle();
  snapshotIfAsked();
  await drain();
  await Promise.all(clients.map((c) => c.close()));
  if (counter.violations !== 0) throw new Error(`${counter.violations} overlapping hold(s)`);
  process.stdout.write(`${JSON.stringify({ before, after })}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
