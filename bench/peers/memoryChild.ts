/**
 * A process of its own for the `memory` scenario: opens N sessions on one transport, one ZkClient
 * each, and prints one JSON line with the process's memory before and after (each taken after
 * full garbage collections), so the growth per session can be read off, and how long opening them
 * and closing them all took.
 *
 * Usage: node --expose-gc -r ts-node/register/transpile-only memoryChild.ts <connectString> <protocol|native> <sessions>
 */
import { ZkClient } from '../../src';
import { transportFactory, type TransportName } from '../../src/client/chooseTransport';
import { settle, snapshotIfAsked } from './heap';

async function open(connectString: string, transport: TransportName, n: number): Promise<ZkClient[]> {
  const clients: ZkClient[] = [];
  // In batches, so the server is not asked for a thousand sessions at once.
  for (let i = 0; i < n; i += 100) {
    const batch = Array.from({ length: Math.min(100, n - i) }, () => new ZkClient({ connectString, sessionTimeoutMs: 30_000, transport }));
    for (const c of batch) c.start();
    for (const c of batch) await c.blockUntilConnected({ timeoutMs: 60_000 });
    clients.push(...batch);
  }
  return clients;
}

/** Sessions opened before the measurement: they load and warm up everything a session uses, and take up the slack the loading left in the heap, so that what grows after is the sessions'. */
const WARM_UP_SESSIONS = 200;

async function main(): Promise<void> {
  const [connectString, transport, sessions] = process.argv.slice(2);
  const n = Number(sessions);
  transportFactory(transport as TransportName);
  const warm = await open(connectString, transport as TransportName, WARM_UP_SESSIONS);
  await Promise.all(warm.map((c) => c.exists('/')));
  const before = await settle();
  const t0 = performance.now();
  const clients = await open(connectString, transport as TransportName, n);
  await Promise.all(clients.map((c) => c.exists('/')));
  const openMs = performance.now() - t0;
  const after = await settle();
  snapshotIfAsked();
  // Every session ends with its closeSession answered: a close that fails fails the run.
  const t1 = performance.now();
  await Promise.all([...warm, ...clients].map((c) => c.close()));
  const closeMs = performance.now() - t1;
  process.stdout.write(`${JSON.stringify({ before, after, openMs, closeMs })}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
