/**
 * A read-write lock: readers share, a writer excludes, and nobody jumps the queue.
 *
 * A price list is read by many and rewritten now and then. Two readers hold the read lock at once;
 * a writer asks and waits for them; a reader that asks after the writer waits behind it (the lock
 * is fair, so a stream of readers cannot starve a writer), and then reads the new prices.
 *
 *   npm run example -- read-write-lock
 */
import { ChildrenWatch, InterProcessReadWriteLock, ZkClient, type Lease } from 'zk-recipes';
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

const PATH = '/examples/prices';
const startedAt = performance.now();
const log = (line: string) => console.log(`${String(Math.round(performance.now() - startedAt)).padStart(5)} ms  ${line}`);

async function connect(connectString: string, id: string): Promise<ZkClient> {
  const client = new ZkClient({ connectString, id });
  client.start();
  try {
    await client.blockUntilConnected({ timeoutMs: 10_000, signal });
  } catch (err) {
    await client.close();
    throw err;
  }
  return client;
}

/** Resolves once the lock has `count` nodes: its contenders are in line, in the order they asked. */
async function waitForLine(client: ZkClient, count: number): Promise<void> {
  // An abort listener added after the abort would never hear it.
  signal.throwIfAborted();
  let reached!: () => void;
  const inLine = new Promise<void>((resolve, reject) => {
    reached = resolve;
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });
  // Awaited below, once the watch is set; a shutdown may come first.
  inLine.catch(() => undefined);
  const enough = (value: { children: string[] } | null) => value !== null && value.children.length >= count;
  const watch = new ChildrenWatch(client, PATH, (value) => enough(value) && reached());
  try {
    if (enough(await watch.start())) reached();
    await inLine;
  } finally {
    await watch.close();
  }
}

async function main(): Promise<void> {
  console.log('starting a ZooKeeper server');
  const server = await TestingServer.start();
  const clients: ZkClient[] = [];
  try {
    // Each participant has its own session, as separate processes would.
    const [reader1, reader2, writer, reader3] = await Promise.all(
      ['reader-1', 'reader-2', 'writer', 'reader-3'].map(async (id) => {
        const client = await connect(server.connectString, id);
        clients.push(client);
        return { id, lock: new InterProcessReadWriteLock(client, PATH) };
      }),
    );
    let prices = { apple: 1.0, pear: 1.2 };

    const held1: Lease = await reader1.lock.readLock().acquire({ timeoutMs: 10_000, signal });
    const held2: Lease = await reader2.lock.readLock().acquire({ timeoutMs: 10_000, signal });
    log(`reader-1 and reader-2 read at the same time: apple costs ${prices.apple}`);

    const writing = writer.lock.writeLock().runExclusive(async () => {
      log('writer holds the write lock: nobody reads now');
      prices = { apple: 1.1, pear: 1.3 };
      log('writer raised the prices');
    }, { signal });
    // Awaited below; a shutdown may end main() before that.
    writing.catch(() => undefined);
    await waitForLine(writer.lock.client, 3);
    log('writer asked, and waits for the readers');

    const lateRead = reader3.lock.readLock().runExclusive(async () => {
      log(`reader-3 reads: apple costs ${prices.apple}`);
      return prices.apple;
    }, { signal });
    lateRead.catch(() => undefined);
    await waitForLine(reader3.lock.client, 4);
    log('reader-3 asked after the writer, and waits behind it');

    await held1.release();
    await held2.release();
    log('reader-1 and reader-2 are done');
    await writing;
    const seen = await lateRead;
    if (seen !== 1.1) throw new Error(`reader-3 read ${seen}: it should have waited for the writer`);
    log('ok: the readers shared, the writer waited for them, and the late reader for the writer');
  } finally {
    await Promise.all(clients.map((client) => client.close()));
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
