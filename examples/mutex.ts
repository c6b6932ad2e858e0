/**
 * A fair mutex with a fencing token guarding a resource.
 *
 * Three workers, each with its own ZooKeeper session, append to a ledger under one
 * InterProcessMutex. The lock is fair: the workers are served in the order they asked. Each holder
 * passes its lease's fencing token to the ledger, which refuses a token older than the newest it
 * has seen: a holder that stalled (a long GC pause, a frozen VM) and lost its lock meanwhile cannot
 * write after the next holder did.
 *
 *   npm run example -- mutex
 */
import { setTimeout } from 'node:timers/promises';
import { InterProcessMutex, ZkClient } from 'zk-recipes';
import { TestingServer } from 'zk-recipes/testing';

/**
 * Ctrl-C or SIGTERM at any moment (while the server starts, while a worker waits or holds): every
 * wait below ends with the signal's reason, what is held is released in the finally blocks, the
 * clients close, and the server stops. A waiter killed without closing keeps its place in line
 * until its session expires.
 */
const shutdown = new AbortController();
const { signal } = shutdown;
for (const name of ['SIGINT', 'SIGTERM'] as const) process.once(name, () => shutdown.abort());

/** The resource: it accepts a write only with a token at least as new as the newest it has seen. */
class FencedLedger {
  private newestToken = -1n;
  readonly entries: string[] = [];

  append(token: bigint, entry: string): void {
    if (token < this.newestToken) throw new Error(`refused "${entry}": token ${token} is older than ${this.newestToken}`);
    this.newestToken = token;
    this.entries.push(entry);
  }
}

async function worker(name: string, connectString: string, ledger: FencedLedger, rounds: number): Promise<bigint[]> {
  // `id` is written into the worker's lock nodes: `npx zk-recipes locks /examples/ledger` shows it.
  const client = new ZkClient({ connectString, id: name });
  client.start();
  const tokens: bigint[] = [];
  try {
    await client.blockUntilConnected({ timeoutMs: 10_000, signal }); // rejects with ConnectionTimeoutError
    const mutex = new InterProcessMutex(client, '/examples/ledger');
    for (let round = 1; round <= rounds; round++) {
      const lease = await mutex.acquire({ timeoutMs: 10_000, signal });
      try {
        ledger.append(lease.fencingToken, `${name} #${round}`);
        tokens.push(lease.fencingToken);
        console.log(`${name} holds the lock (fencing token ${lease.fencingToken}) and appends entry #${round}`);
        await setTimeout(20, undefined, { signal });
      } finally {
        await lease.release();
      }
    }
  } finally {
    await client.close();
  }
  return tokens;
}

async function main(): Promise<void> {
  console.log('starting a ZooKeeper server');
  const server = await TestingServer.start();
  try {
    const ledger = new FencedLedger();
    const tokens = await Promise.all(['alice', 'bob', 'carol'].map((name) => worker(name, server.connectString, ledger, 3)));
    console.log(`ledger: ${ledger.entries.join(', ')}`);

    // A holder that stalled while holding writes late, with its old token: the ledger refuses it.
    const stale = tokens[0][0];
    try {
      ledger.append(stale, 'alice, waking up from a long pause');
      throw new Error('the ledger took a write with a stale token');
    } catch (err) {
      console.log(`a late write was ${(err as Error).message}`);
    }
    if (ledger.entries.length !== 9) throw new Error(`expected 9 entries, got ${ledger.entries.length}`);
    console.log('ok: 9 entries, each under a fencing token newer than the last');
  } finally {
    await server.close();
  }
}

main().catch((err: unknown) => {
  // Whatever a wait rejected with when the signal came, the shutdown was asked for: no stack.
  if (signal.aborted) {
    console.log('stopped');
    return;
  }
  console.error(err);
  process.exitCode = 1;
});
