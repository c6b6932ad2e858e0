import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ZkClient } from '../../../src';
import { InterProcessMutex, InterProcessReadWriteLock, type InterProcessLock } from '../../../recipes/locks';
import { DistributedQueue } from '../../../recipes/queue';
import { childrenOf, eventually, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';

/** Counts holders inside a critical section, and remembers the most at once. */
class Section {
  inside = 0;
  most = 0;
  readonly tokens: bigint[] = [];
  private entered: Array<() => void> = [];

  /** Holds `lock` until `until` settles (or for `forMs`). */
  async hold(lock: InterProcessLock, until: Promise<unknown> | number): Promise<void> {
    const lease = await lock.acquire({ timeoutMs: timing(30_000) });
    this.inside++;
    this.most = Math.max(this.most, this.inside);
    this.tokens.push(lease.fencingToken);
    for (const wake of this.entered.splice(0)) wake();
    await (typeof until === 'number' ? new Promise((r) => setTimeout(r, until)) : until);
    this.inside--;
    await lease.release();
  }

  /** Resolves once someone is inside. */
  someoneInside(): Promise<void> {
    return this.inside > 0 ? Promise.resolve() : new Promise((resolve) => this.entered.push(resolve));
  }
}

/** A promise to hold the lock until, and its opener. */
function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

function get(server: Server, path: string): Promise<number> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * One lock object shared by the async flows of one process: each acquire outside a runExclusive
 * callback, without a lease to re-enter, is a contender of its own and waits its turn.
 */
describe('mutual exclusion between async flows of one process', () => {
  const zk = useZooKeeper();
  let root: string;
  let client: ZkClient;

  beforeEach(async () => {
    root = randomRoot('flows');
    client = await zk.clients.connect({ connectString: zk.server.connectString });
  });

  it('a timer started while the main flow holds the lock waits for it, after the main flow acquired and released once', async () => {
    const mutex = new InterProcessMutex(client, `${root}/lock`);
    await (await mutex.acquire()).release();
    const main = await mutex.acquire();
    let timerLease: { fencingToken: bigint; node: string } | undefined;
    const timer = new Promise<void>((resolve, reject) =>
      setTimeout(() => {
        mutex
          .acquire({ timeoutMs: timing(30_000) })
          .then(async (lease) => {
            timerLease = lease;
            await lease.release();
          })
          .then(resolve, reject);
      }, 100),
    );
    await eventually('the timer queued behind the main flow', async () => (await childrenOf(client, `${root}/lock`)).length === 2);
    expect(timerLease).toBeUndefined();
    await main.release();
    await timer;
    expect(timerLease?.node).not.toBe(main.node);
    expect(timerLease?.fencingToken).toBeGreaterThan(main.fencingToken);
  });

  /**
   * A server whose handlers hold `lock` until the gate opens: the first request gets in, then three
   * more come while it holds. They must queue (their nodes appear) and none may be inside with it.
   */
  async function handlersExclude(lock: InterProcessLock, lockPath: string): Promise<Section> {
    const section = new Section();
    const { opened, open } = gate();
    // The main flow takes and releases the lock first, as an application's start-up might.
    await (await lock.acquire()).release();
    const http = createServer((_req, res) => {
      section.hold(lock, opened).then(
        () => res.end('ok'),
        () => {
          res.statusCode = 500;
          res.end();
        },
      );
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    try {
      const first = get(http, '/');
      await section.someoneInside();
      const rest = [1, 2, 3].map(() => get(http, '/'));
      await eventually('the other three requests queued for the lock', async () => (await childrenOf(client, lockPath)).length === 4);
      expect(section.inside).toBe(1);
      open();
      expect(await Promise.all([first, ...rest])).toEqual([200, 200, 200, 200]);
    } finally {
      open();
      await new Promise((r) => http.close(r));
    }
    expect(section.most).toBe(1);
    expect(new Set(section.tokens).size).toBe(4);
    return section;
  }

  it('HTTP request handlers that take the mutex are inside one at a time', async () => {
    await handlersExclude(new InterProcessMutex(client, `${root}/lock`), `${root}/lock`);
  });

  it('the write lock in HTTP request handlers excludes them from each other', async () => {
    await handlersExclude(new InterProcessReadWriteLock(client, `${root}/rw`).writeLock(), `${root}/rw`);
  });

  it('queue handlers running concurrently (maxItems 3) are inside one at a time', async () => {
    const mutex = new InterProcessMutex(client, `${root}/lock`);
    const section = new Section();
    const queue = new DistributedQueue<number>(client, `${root}/queue`, { lockPath: `${root}/queue-locks`, maxItems: 3 });
    let handled = 0;
    const allHandled = new Promise<void>((resolve, reject) => {
      queue.start(async () => {
        try {
          await section.hold(mutex, 20);
        } catch (err) {
          reject(err);
        }
        if (++handled === 6) resolve();
      });
    });
    try {
      for (let i = 0; i < 6; i++) await queue.put(i);
      await allHandled;
    } finally {
      await queue.close();
    }
    expect(section.most).toBe(1);
  });

  it('Promise.all of flows that acquire one lock object while another of them holds it: one at a time, tokens rising', async () => {
    const mutex = new InterProcessMutex(client, `${root}/lock`);
    const section = new Section();
    await (await mutex.acquire()).release();
    const { opened, open } = gate();
    const flows = Promise.all(
      [0, 1, 2, 3].map(async (i) => {
        if (i > 0) await section.someoneInside();
        await section.hold(mutex, i === 0 ? opened : 10);
      }),
    );
    await eventually('the later flows queued for the lock', async () => (await childrenOf(client, `${root}/lock`)).length === 4);
    expect(section.inside).toBe(1);
    open();
    await flows;
    expect(section.most).toBe(1);
    for (let i = 1; i < section.tokens.length; i++) expect(section.tokens[i]).toBeGreaterThan(section.tokens[i - 1]);
  });
});
