/**
 * The requeue of a failed item, cut off by a crash right after its first write reaches the server:
 * on the protocol transport the requeue is one multi (the new node and the delete of the old one),
 * so the queue holds the item once; on the native binding, which has no multi, the create goes
 * first and the delete after it, so the queue holds it twice (at least once, never lost).
 */
import { FrameScanner } from '../../../chaos/frames';
import { DistributedQueue } from '../../../recipes/queue';
import { TEST_TRANSPORT, eventually, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { childrenOf } from './queueTesting';

/** Opcodes of the writes a requeue can start with: create, create2, multi. */
const FIRST_WRITES: ReadonlySet<number> = new Set([1, 15, 14]);

describe('atomic requeue', () => {
  const zk = useZooKeeper({ proxy: 'each' });

  it('a consumer cut off right after its requeue reaches the server leaves the item in the queue once (protocol) or twice (native)', async () => {
    const root = randomRoot('requeue');
    const path = `${root}/q`;
    const locks = `${root}/locks`;
    const admin = await zk.clients.connect({ connectString: zk.server.connectString });
    const consumer = await zk.clients.connect({ connectString: zk.proxy.connectString, sessionTimeoutMs: 4_000 });
    const producer = new DistributedQueue<string>(admin, path, { lockPath: locks });
    await producer.put('poison');
    const [original] = await childrenOf(admin, path);

    // Once the handler has thrown, the consumer's next write (the requeue's first) is let through to
    // the server, and from then on nothing passes either way: the consumer is as good as crashed.
    let armed = false;
    let fired = false;
    let firstWriteOp: number | undefined;
    const scanners = new Map<number, FrameScanner>();
    zk.proxy.intercept((chunk, { connection, direction }) => {
      if (fired) return 'drop';
      if (!armed || direction !== 'client->upstream') return 'forward';
      let scanner = scanners.get(connection);
      if (!scanner) scanners.set(connection, (scanner = new FrameScanner()));
      for (const frame of scanner.feed(chunk)) {
        if (frame.head.length < 8 || frame.head.readInt32BE(0) <= 0) continue;
        const op = frame.head.readInt32BE(4);
        if (FIRST_WRITES.has(op)) {
          firstWriteOp = op;
          fired = true;
        }
      }
      return 'forward';
    });

    const queue = new DistributedQueue<string>(consumer, path, { lockPath: locks, onError: () => undefined });
    queue.start(() => {
      armed = true;
      throw new Error('the handler fails');
    });
    await eventually('the requeue to be sent', () => fired);
    // The consumer's session expires on the server: its lock node goes with it.
    await eventually('the lock node to go with the session', async () => (await childrenOf(admin, locks)).length === 0, timing(30_000));
    await queue.close();

    const left = await childrenOf(admin, path);
    if (TEST_TRANSPORT === 'protocol') {
      expect(firstWriteOp).toBe(14);
      expect(left).toHaveLength(1);
      expect(left[0]).not.toBe(original);
    } else {
      expect(firstWriteOp).not.toBe(14);
      expect(left).toHaveLength(2);
      expect(left).toContain(original);
    }
    // Whichever is left holds the item.
    for (const name of left) expect((await admin.getData(`${path}/${name}`)).data.toString()).toContain('poison');
  });
});
