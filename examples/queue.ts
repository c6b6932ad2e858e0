/**
 * A queue with producers and consumers.
 *
 * Two producers put orders into a DistributedQueue; two consumers take them, each order by exactly
 * one consumer. With `lockPath` the queue is lock-safe: an order is deleted only once its consumer
 * is done with it, so an order whose consumer dies midway goes to another one (at-least-once).
 * Consumers wake when orders arrive: ZooKeeper watches, no polling.
 *
 *   npm run example -- queue
 */
import { DistributedQueue, ZkClient } from 'zk-recipes';
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

interface Order {
  id: string;
  amount: number;
}

const QUEUE = '/examples/orders';
const QUEUE_LOCKS = '/examples/orders-locks';
const ORDERS_PER_PRODUCER = 10;

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

async function produce(client: ZkClient, name: string): Promise<void> {
  const queue = new DistributedQueue<Order>(client, QUEUE, { lockPath: QUEUE_LOCKS });
  for (let n = 1; n <= ORDERS_PER_PRODUCER; n++) {
    await queue.put({ id: `${name}-${n}`, amount: n * 10 }, { signal });
  }
  console.log(`${name} put ${ORDERS_PER_PRODUCER} orders`);
}

/** What the consumers share, so that they stop once every order is in. */
interface Tally {
  readonly handled: Set<string>;
  readonly total: number;
  readonly stop: AbortController;
}

/** Takes orders until every order is in; returns the ids it handled. */
async function consume(client: ZkClient, name: string, tally: Tally): Promise<string[]> {
  const queue = new DistributedQueue<Order>(client, QUEUE, { lockPath: QUEUE_LOCKS });
  const mine: string[] = [];
  try {
    for await (const order of queue.consume({ signal: tally.stop.signal })) {
      // The order is deleted from the queue when the loop comes back for the next one.
      mine.push(order.id);
      tally.handled.add(order.id);
      if (tally.handled.size === tally.total) tally.stop.abort();
    }
  } catch (err) {
    if (!tally.stop.signal.aborted) throw err;
  } finally {
    await queue.close();
  }
  console.log(`${name} handled ${mine.length} orders: ${mine.join(', ')}`);
  return mine;
}

async function main(): Promise<void> {
  console.log('starting a ZooKeeper server');
  const server = await TestingServer.start();
  const clients: ZkClient[] = [];
  try {
    for (const id of ['producer-a', 'producer-b', 'consumer-1', 'consumer-2']) clients.push(await connect(server.connectString, id));
    const [producerA, producerB, consumer1, consumer2] = clients;
    const total = 2 * ORDERS_PER_PRODUCER;
    const tally: Tally = { handled: new Set(), total, stop: new AbortController() };
    // An abort listener added after the abort would never hear it.
    signal.throwIfAborted();
    signal.addEventListener('abort', () => tally.stop.abort(signal.reason), { once: true });
    const consumers = [consume(consumer1, 'consumer-1', tally), consume(consumer2, 'consumer-2', tally)];
    await Promise.all([produce(producerA, 'producer-a'), produce(producerB, 'producer-b')]);
    const [byOne, byTwo] = await Promise.all(consumers);

    signal.throwIfAborted();
    const all = [...byOne, ...byTwo];
    if (all.length !== total || new Set(all).size !== total) throw new Error(`expected ${total} orders once each, got ${all.length} (${new Set(all).size} distinct)`);
    console.log(`ok: ${total} orders, each handled by exactly one consumer`);
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
