import { InvalidArgumentError, ZkClient } from '../../src';
import { RetryNTimes } from '../../src/retry';
import { FakeZooKeeper } from '../../src/transport/FakeTransport';
import { InterProcessReadWriteLock, LockUpgradeError, readLockDriver, writeLockDriver } from './InterProcessReadWriteLock';
import { LockInternals, standardDriver } from './LockInternals';
import { sortLockNodes } from './sequence';

const uuid = (n: number) => `${String(n).padStart(8, '0')}-2fa1-11d2-883f-0016d3cca427`;
const read = (seq: number, id = seq) => `_c_${uuid(id)}-__READ__${String(seq).padStart(10, '0')}`;
const write = (seq: number, id = seq) => `_c_${uuid(id)}-__WRIT__${String(seq).padStart(10, '0')}`;

/** The nodes before `ours` in lock order, as the core hands them to `decide`. */
function before(children: string[], ours: string): string[] {
  const sorted = sortLockNodes(children, ['__READ__', '__WRIT__']);
  return sorted.slice(0, sorted.indexOf(ours));
}

describe('the write lock driver', () => {
  const driver = writeLockDriver();

  it('names and orders nodes as Curator, and re-lists on every wake-up', () => {
    expect(driver.lockName).toBe('__WRIT__');
    expect(driver.sortNames).toEqual(['__READ__', '__WRIT__']);
    expect(driver.relistOnWake).toBe(true);
    expect(driver.nodeToCreate).toBeUndefined();
  });

  it('holds only at the head of all nodes', () => {
    expect(driver.decide([], write(1))).toEqual({ holds: true });
    const children = [write(3), read(1), read(2)];
    expect(driver.decide(before(children, write(3)), write(3)).holds).toBe(false);
  });

  it('waits on its immediate predecessor, reader or writer', () => {
    const children = [read(1), write(2), read(3), write(4), read(5)];
    expect(driver.decide(before(children, write(2)), write(2))).toEqual({ holds: false, watch: read(1) });
    expect(driver.decide(before(children, write(4)), write(4))).toEqual({ holds: false, watch: read(3) });
    expect(driver.decide(before([write(1), write(2)], write(2)), write(2))).toEqual({ holds: false, watch: write(1) });
  });

  it('waits behind a downgraded read node that sorts at an earlier writer’s place (CURATOR-621)', () => {
    // A held write 5 and downgraded: its read node carries sequence 5. B's writer 6 waits on
    // whichever of the two sorts last; once write 5 is gone, on the read node.
    const downgraded = read(5, 99);
    const children = [write(5), downgraded, write(6)];
    const decision = driver.decide(before(children, write(6)), write(6));
    expect(decision.holds).toBe(false);
    expect([write(5), downgraded]).toContain(decision.holds ? undefined : decision.watch);
    expect(driver.decide(before([downgraded, write(6)], write(6)), write(6))).toEqual({ holds: false, watch: downgraded });
  });
});

describe('the read lock driver', () => {
  const driver = readLockDriver(() => undefined);

  it('names and orders nodes as Curator, re-lists on wake-up, and creates the standard node outside a downgrade', () => {
    expect(driver.lockName).toBe('__READ__');
    expect(driver.sortNames).toEqual(['__READ__', '__WRIT__']);
    expect(driver.relistOnWake).toBe(true);
    expect(driver.nodeToCreate?.()).toBeUndefined();
  });

  it('holds when no writer sorts before it, however many readers do', () => {
    expect(driver.decide([], read(1))).toEqual({ holds: true });
    const children = [read(1), read(2), read(3), write(4)];
    expect(driver.decide(before(children, read(3)), read(3))).toEqual({ holds: true });
  });

  it('waits on the lowest writer before it (Curator 5.x), not the nearest', () => {
    const children = [read(1), write(2), read(3), write(4), read(5)];
    expect(driver.decide(before(children, read(3)), read(3))).toEqual({ holds: false, watch: write(2) });
    expect(driver.decide(before(children, read(5)), read(5))).toEqual({ holds: false, watch: write(2) });
  });

  it('is fair: a reader behind a queued writer waits even while readers hold', () => {
    const children = [read(1), write(2), read(3)];
    expect(driver.decide(before(children, read(3)), read(3))).toEqual({ holds: false, watch: write(2) });
  });

  it('ignores writers that sort after it', () => {
    const children = [read(1), read(2), write(3)];
    expect(driver.decide(before(children, read(2)), read(2))).toEqual({ holds: true });
  });
});

describe('the read lock driver in a context that holds the write lock (downgrade)', () => {
  const writeNode = `/locks/rw/${write(7, 42)}`;
  const driver = readLockDriver(() => writeNode);

  it('holds at once, whatever sorts before it', () => {
    expect(driver.decide([write(7, 42)], read(7))).toEqual({ holds: true });
    expect(driver.decide([read(1), write(3), write(7, 42)], read(7))).toEqual({ holds: true });
  });

  it('creates a plain EPHEMERAL read node at the write node’s sequence (CURATOR-621)', () => {
    expect(driver.nodeToCreate?.()).toEqual({ name: '__READ__0000000007', mode: 'EPHEMERAL' });
  });

  it('keeps a wrapped (negative) sequence as ZooKeeper wrote it', () => {
    const wrapped = readLockDriver(() => `/locks/rw/_c_${uuid(1)}-__WRIT__-2147483648`);
    expect(wrapped.nodeToCreate?.()).toEqual({ name: '__READ__-2147483648', mode: 'EPHEMERAL' });
  });

  it('asks its context afresh on every decision', () => {
    let held: string | undefined = writeNode;
    const switching = readLockDriver(() => held);
    const children = [write(3), read(7)];
    expect(switching.decide(before(children, read(7)), read(7))).toEqual({ holds: true });
    held = undefined;
    expect(switching.decide(before(children, read(7)), read(7))).toEqual({ holds: false, watch: write(3) });
    expect(switching.nodeToCreate?.()).toBeUndefined();
  });
});

describe('the lock core and the read-write lock on the in-memory fake', () => {
  let client: ZkClient;

  beforeEach(async () => {
    const zk = new FakeZooKeeper();
    client = new ZkClient({
      connectString: '127.0.0.1:2181',
      sessionTimeoutMs: 1_000,
      connectionTimeoutMs: 200,
      retryPolicy: new RetryNTimes({ n: 3, sleepMsBetweenRetries: 1 }),
      transportFactory: zk.factory(),
    });
    client.start();
    await client.blockUntilConnected({ timeoutMs: 1_000 });
  });
  afterEach(() => client.close());

  it('creates the node a driver asks for: protected, non-sequential, named exactly', async () => {
    const internals = new LockInternals(client, '/l', { ...standardDriver('lock-'), nodeToCreate: () => ({ name: 'lock-0000000042', mode: 'EPHEMERAL' }) });
    const won = await internals.attempt({ timeoutMs: 0 });
    expect(won?.node).toMatch(/^\/l\/_c_[0-9a-f-]{36}-lock-0000000042$/);
    expect((await client.exists(won?.node as string))?.ephemeralOwner).toBe(client.sessionId);
  });

  it('refuses a custom node that would not sort, before creating anything', async () => {
    const internals = new LockInternals(client, '/l', { ...standardDriver('lock-'), nodeToCreate: () => ({ name: 'lock-x', mode: 'EPHEMERAL' }) });
    await expect(internals.attempt({ timeoutMs: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await client.exists('/l')).toBeNull();
  });

  it('downgrades: the read node takes the write node’s sequence, and the read lock outlives the write lock', async () => {
    const rw = new InterProcessReadWriteLock(client, '/rw');
    const write = await rw.writeLock().acquire();
    const read = await rw.readLock().acquire({ timeoutMs: 0 });
    const sequence = write.node.slice(-10);
    expect(read.node).toMatch(new RegExp(`^/rw/_c_[0-9a-f-]{36}-__READ__${sequence}$`));
    await write.release();
    expect(rw.readLock().isOwnedByCurrentContext()).toBe(true);
    expect(rw.writeLock().isOwnedByCurrentContext()).toBe(false);
    expect(await rw.readLock().getParticipantNodes()).toEqual([read.node]);
    expect(await rw.writeLock().getParticipantNodes()).toEqual([]);
    await read.release();
    expect(await client.getChildren('/rw')).toEqual([]);
  });

  it('refuses an upgrade at once with LockUpgradeError, creating no node; a held write lock re-enters', async () => {
    const rw = new InterProcessReadWriteLock(client, '/rw');
    const read = await rw.readLock().acquire();
    const err = await rw.writeLock().acquire().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockUpgradeError);
    expect(err).toMatchObject({ code: 'LOCK_UPGRADE', name: 'LockUpgradeError', path: '/rw' });
    await expect(rw.writeLock().tryAcquire()).rejects.toBeInstanceOf(LockUpgradeError);
    await expect(rw.writeLock().runExclusive(() => 1)).rejects.toBeInstanceOf(LockUpgradeError);
    expect(await client.getChildren('/rw')).toEqual([read.node.slice('/rw/'.length)]);
    await read.release();

    const write = await rw.writeLock().acquire();
    const downgraded = await rw.readLock().acquire();
    const again = await rw.writeLock().acquire({ timeoutMs: 0 });
    expect(again.node).toBe(write.node);
    await Promise.all([again.release(), write.release(), downgraded.release()]);
  });

  it('checks its options', () => {
    expect(() => new InterProcessReadWriteLock(client, '/')).toThrow(InvalidArgumentError);
    expect(() => new InterProcessReadWriteLock(client, '/rw', { data: 1 as unknown as string })).toThrow(InvalidArgumentError);
  });
});
