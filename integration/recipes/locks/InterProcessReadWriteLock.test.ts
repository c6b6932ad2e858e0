import { InterProcessReadWriteLock, LockTimeoutError, LockUpgradeError, type Lease } from '../../../recipes/locks';
import { type ZkClient } from '../../../src';
import { childrenOf, eventually, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { describeLockContract } from './lockContract';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const READ_NODE = new RegExp(`^_c_${UUID}-__READ__\\d{10}$`);
const WRITE_NODE = new RegExp(`^_c_${UUID}-__WRIT__\\d{10}$`);

/** The last path segment. */
const nameOf = (node: string) => node.slice(node.lastIndexOf('/') + 1);

/** A promise whose settlement can be checked without waiting. */
function track<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  const tracked = promise.finally(() => (settled = true));
  // The test awaits `promise`; an early rejection must not count as unhandled meanwhile.
  tracked.catch(() => undefined);
  return { promise: tracked, settled: () => settled };
}

/** A small seeded generator, so a failing random workload can be replayed from its seed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describeLockContract('InterProcessReadWriteLock.writeLock', {
  make: (client, path) => new InterProcessReadWriteLock(client, path).writeLock(),
  reentrant: 'lease',
  nodes: childrenOf,
});

describe('InterProcessReadWriteLock', () => {
  const zk = useZooKeeper();
  let path: string;

  beforeEach(() => {
    path = `${randomRoot('rwlock')}/rw`;
  });

  const connect = () => zk.clients.connect({ connectString: zk.server.connectString });
  const rwlock = (client: ZkClient) => new InterProcessReadWriteLock(client, path);
  /** Waits until the lock has `n` nodes: a contender has queued. */
  const queued = (client: ZkClient, n: number) => eventually(`${n} lock nodes`, async () => (await childrenOf(client, path)).length === n);

  it("readers share, across sessions; their nodes follow Curator's layout; a writer waits for all of them", async () => {
    const [a, b, c] = await Promise.all([connect(), connect(), connect()]);
    const readA = await rwlock(a).readLock().acquire({ timeoutMs: timing(10_000) });
    const readB = await rwlock(b).readLock().acquire({ timeoutMs: timing(10_000) });
    expect(nameOf(readA.node)).toMatch(READ_NODE);
    expect(nameOf(readB.node)).toMatch(READ_NODE);
    expect(readB.fencingToken).toBeGreaterThanOrEqual(readA.fencingToken);

    const writerLock = rwlock(c).writeLock();
    expect(await writerLock.tryAcquire()).toBeUndefined();
    const writer = track(writerLock.acquire({ timeoutMs: timing(20_000) }));
    await queued(c, 3);
    const writeNode = (await childrenOf(c, path)).find((n) => WRITE_NODE.test(n));
    expect(writeNode).toBeDefined();
    expect(await rwlock(c).readLock().getParticipantNodes()).toEqual([readA.node, readB.node]);
    expect(await rwlock(c).writeLock().getParticipantNodes()).toEqual([`${path}/${writeNode}`]);

    await readA.release();
    // The writer still waits for B: it cannot hold while B's node is before it.
    expect(writer.settled()).toBe(false);
    await readB.release();
    const write = await writer.promise;
    expect(write.fencingToken).toBeGreaterThan(readB.fencingToken);
    await write.release();
    expect(await childrenOf(a, path)).toEqual([]);
  });

  it('a writer excludes readers and writers', async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    const write = await rwlock(a).writeLock().acquire({ timeoutMs: timing(10_000) });
    expect(nameOf(write.node)).toMatch(WRITE_NODE);
    const other = rwlock(b);
    expect(await other.readLock().tryAcquire()).toBeUndefined();
    expect(await other.writeLock().tryAcquire()).toBeUndefined();
    await expect(other.readLock().acquire({ timeoutMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    await expect(other.writeLock().acquire({ timeoutMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    // A timed-out attempt returns by its deadline and leaves its node's delete to the background.
    await eventually('the timed-out nodes to go', async () => (await childrenOf(a, path)).length === 1);
    expect(await childrenOf(a, path)).toEqual([nameOf(write.node)]);

    const reader = track(other.readLock().acquire({ timeoutMs: timing(20_000) }));
    await queued(a, 2);
    await write.release();
    const read = await reader.promise;
    expect(read.fencingToken).toBeGreaterThan(write.fencingToken);
    await read.release();
  });

  it('is fair: a reader arriving behind a queued writer waits until that writer is done', async () => {
    const [a, b, c] = await Promise.all([connect(), connect(), connect()]);
    const readA = await rwlock(a).readLock().acquire({ timeoutMs: timing(10_000) });
    const order: string[] = [];
    const writer = track(
      rwlock(b)
        .writeLock()
        .acquire({ timeoutMs: timing(20_000) })
        .then((lease) => {
          order.push('writer');
          return lease;
        }),
    );
    await queued(a, 2);
    const lateReader = rwlock(c).readLock();
    // Readers hold, yet a new reader does not join them: it is behind the writer.
    expect(await lateReader.tryAcquire()).toBeUndefined();
    const reader = track(
      lateReader.acquire({ timeoutMs: timing(20_000) }).then((lease) => {
        order.push('reader');
        return lease;
      }),
    );
    await queued(a, 3);

    await readA.release();
    const write = await writer.promise;
    expect(order).toEqual(['writer']);
    expect(reader.settled()).toBe(false);
    await write.release();
    const read = await reader.promise;
    expect(order).toEqual(['writer', 'reader']);
    await read.release();
  });

  it('is re-entrant for reads and for writes, given the lease', async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    const lock = rwlock(a);
    const outer = await lock.readLock().acquire();
    const inner = await lock.readLock().acquire({ reenter: outer });
    expect(inner.node).toBe(outer.node);
    expect(await childrenOf(a, path)).toHaveLength(1);
    await inner.release();
    expect(lock.readLock().isAcquiredInThisProcess()).toBe(true);
    expect(await rwlock(b).writeLock().tryAcquire()).toBeUndefined();
    await outer.release();
    expect(lock.readLock().isAcquiredInThisProcess()).toBe(false);

    const write = await lock.writeLock().acquire();
    const again = await lock.writeLock().acquire({ reenter: write });
    expect(again.node).toBe(write.node);
    await again.release();
    expect(await rwlock(b).readLock().tryAcquire()).toBeUndefined();
    await write.release();
    expect(await childrenOf(a, path)).toEqual([]);
  });

  it('downgrades write to read, and a writer queued meanwhile cannot slip in (CURATOR-621)', async () => {
    const [a, b, c] = await Promise.all([connect(), connect(), connect()]);
    const lockA = rwlock(a);
    const write = await lockA.writeLock().acquire({ timeoutMs: timing(10_000) });
    const waiting = track(rwlock(b).writeLock().acquire({ timeoutMs: timing(30_000) }));
    await queued(a, 2);

    const read = await lockA.readLock().acquire({ reenter: write });
    const sequence = nameOf(write.node).slice(-10);
    expect(nameOf(read.node)).toMatch(READ_NODE);
    expect(nameOf(read.node).endsWith(`__READ__${sequence}`)).toBe(true);
    const readStat = await a.exists(read.node);
    expect(readStat?.ephemeralOwner).toBe(a.sessionId);

    await write.release();
    expect(lockA.readLock().isAcquiredInThisProcess()).toBe(true);
    expect(lockA.writeLock().isAcquiredInThisProcess()).toBe(false);
    // B wakes when the write node goes, lists again, finds our read node ahead of it and watches
    // it: once the server shows that watch, B has decided to wait.
    const bSession = `0x${b.sessionId.toString(16)}`;
    const outcome = await eventually('B to watch the downgraded read node, or to slip in', async () => {
      if (waiting.settled()) return 'B slipped in';
      // wchp: each watched path, then its watchers' session ids, one per tab-indented line.
      const watches = (await zk.server.fourLetterWord('wchp')).split('\n');
      const at = watches.indexOf(read.node);
      if (at < 0) return undefined;
      const watchers = watches.slice(at + 1);
      const end = watchers.findIndex((line) => !line.startsWith('\t'));
      return watchers.slice(0, end < 0 ? undefined : end).some((line) => line.trim() === bSession) && 'B waits on our read node';
    });
    expect(outcome).toBe('B waits on our read node');
    expect(waiting.settled()).toBe(false);
    // Only a reader holds, yet a new reader is not let in: it is behind B's writer.
    expect(await rwlock(c).readLock().tryAcquire()).toBeUndefined();

    await read.release();
    const bWrite = await waiting.promise;
    expect(bWrite.fencingToken).toBeGreaterThan(read.fencingToken);
    await bWrite.release();
  });

  it('refuses a read-to-write upgrade at once with LockUpgradeError, leaving no node', async () => {
    const a = await connect();
    const lock = rwlock(a);
    const read = await lock.readLock().acquire();
    const started = Date.now();
    const err = await lock
      .writeLock()
      .acquire({ timeoutMs: timing(10_000), reenter: read })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockUpgradeError);
    expect(err).toMatchObject({ code: 'LOCK_UPGRADE', path });
    expect(Date.now() - started).toBeLessThan(timing(1_000));
    await expect(lock.writeLock().tryAcquire({ reenter: read })).rejects.toBeInstanceOf(LockUpgradeError);
    // Inside the read lock's runExclusive, without being told.
    await expect(lock.readLock().runExclusive(() => lock.writeLock().acquire({ timeoutMs: timing(10_000) }))).rejects.toBeInstanceOf(LockUpgradeError);
    expect(await childrenOf(a, path)).toEqual([nameOf(read.node)]);
    await read.release();
    // Without the read lock, the same context takes the write lock as usual.
    const write = await lock.writeLock().acquire({ timeoutMs: timing(10_000) });
    await write.release();
  });

  it('a 90/10 read/write workload across 4 sessions: no writer overlaps anyone, readers overlap only readers', async () => {
    const sessions = await Promise.all([connect(), connect(), connect(), connect()]);
    const seed = Date.now() >>> 0;
    const random = mulberry32(seed);
    const until = Date.now() + timing(3_000);
    let readers = 0;
    let writers = 0;
    let maxReaders = 0;
    let writes = 0;
    let firstOp = true;
    let maxToken = -1n;
    let lastWriteToken = -1n;
    const violations: string[] = [];
    const check = (what: string, ok: boolean) => {
      if (!ok) violations.push(`${what} (readers ${readers}, writers ${writers}, seed ${seed})`);
    };

    const flows = sessions.flatMap((client) =>
      [0, 1].map(async () => {
        const lock = new InterProcessReadWriteLock(client, path);
        while (Date.now() < until) {
          // The first operation of all is a write, so that the few seconds always have one.
          const writing = firstOp || random() < 0.1;
          firstOp = false;
          const lease: Lease = await (writing ? lock.writeLock() : lock.readLock()).acquire({ timeoutMs: timing(30_000) });
          if (writing) {
            check('a writer entered beside others', readers === 0 && writers === 0);
            check('a writer token did not rise above every earlier token', lease.fencingToken > maxToken);
            writers++;
            writes++;
            lastWriteToken = lease.fencingToken;
          } else {
            check('a reader entered beside a writer', writers === 0);
            check('a reader token did not rise above the last writer', lease.fencingToken > lastWriteToken);
            readers++;
            maxReaders = Math.max(maxReaders, readers);
          }
          if (lease.fencingToken > maxToken) maxToken = lease.fencingToken;
          // Hold across a few event-loop turns, so overlapping holders would show.
          await new Promise((r) => setTimeout(r, 1 + Math.floor(random() * 5)));
          if (writing) {
            check('someone entered beside a writer', readers === 0 && writers === 1);
            writers--;
          } else {
            check('a writer entered beside a reader', writers === 0);
            readers--;
          }
          await lease.release();
        }
      }),
    );
    await Promise.all(flows);
    expect(violations).toEqual([]);
    // Readers did share at some point: the workload exercised the overlap it checks.
    expect(maxReaders).toBeGreaterThan(1);
    expect(writes).toBeGreaterThan(0);
    expect(await childrenOf(sessions[0], path)).toEqual([]);
  });
});
