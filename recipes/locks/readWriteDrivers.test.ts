import { InvalidArgumentError, ZkClient } from '../../src';
import { RetryNTimes } from '../../src/retry';
import { FakeZooKeeper } from '../../test/FakeTransport';
import { Deadline } from '../../src/util/deadline';
import { InterProcessReadWriteLock, LockUpgradeError, downgradeNode, readLockDriver, writeLockDriver } from './InterProcessReadWriteLock';
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
  const driver = readLockDriver();

  it('names and orders nodes as Curator, and re-lists on wake-up', () => {
    expect(driver.lockName).toBe('__READ__');
    expect(driver.sortNames).toEqual(['__READ__', '__WRIT__']);
    expect(driver.relistOnWake).toBe(true);
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

describe('the read lock driver for a downgraded read node', () => {
  const driver = readLockDriver();

  it('is not held up by the write node it was downgraded from (the one with its own sequence), whichever sorts first', () => {
    expect(driver.decide([write(7, 42)], read(7))).toEqual({ holds: true });
    expect(driver.decide([read(1), write(7, 42)], read(7))).toEqual({ holds: true });
  });

  it('still waits for any other writer before it', () => {
    expect(driver.decide([write(3), write(7, 42)], read(7))).toEqual({ holds: false, watch: write(3) });
  });

  it('is created as a plain EPHEMERAL read node at the write node’s sequence (CURATOR-621)', () => {
    expect(downgradeNode(`/locks/rw/${write(7, 42)}`)).toEqual({ name: '__READ__0000000007', mode: 'EPHEMERAL' });
  });

  it('keeps a wrapped (negative) sequence as ZooKeeper wrote it', () => {
    expect(downgradeNode(`/locks/rw/_c_${uuid(1)}-__WRIT__-2147483648`)).toEqual({ name: '__READ__-2147483648', mode: 'EPHEMERAL' });
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

  it('creates the node it is asked for: protected, non-sequential, named exactly', async () => {
    const internals = new LockInternals(client, '/l', standardDriver('lock-'));
    const won = await internals.attempt({ deadline: Deadline.after(1_000), wait: false, node: { name: 'lock-0000000042', mode: 'EPHEMERAL' } });
    expect(won?.node).toMatch(/^\/l\/_c_[0-9a-f-]{36}-lock-0000000042$/);
    expect((await client.exists(won?.node as string))?.ephemeralOwner).toBe(client.sessionId);
  });

  it('refuses a custom node that would not sort, before creating anything', async () => {
    const internals = new LockInternals(client, '/l', standardDriver('lock-'));
    await expect(internals.attempt({ deadline: Deadline.after(1_000), wait: false, node: { name: 'lock-x', mode: 'EPHEMERAL' } })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await client.exists('/l')).toBeNull();
  });

  it('downgrades, given the write lease: the read node takes its sequence, and the read lock outlives the write lock', async () => {
    const rw = new InterProcessReadWriteLock(client, '/rw');
    const write = await rw.writeLock().acquire();
    const read = await rw.readLock().acquire({ reenter: write, timeoutMs: 1_000 });
    const sequence = write.node.slice(-10);
    expect(read.node).toMatch(new RegExp(`^/rw/_c_[0-9a-f-]{36}-__READ__${sequence}$`));
    await write.release();
    expect(rw.readLock().isAcquiredInThisProcess()).toBe(true);
    expect(rw.writeLock().isAcquiredInThisProcess()).toBe(false);
    expect(await rw.readLock().getParticipantNodes()).toEqual([read.node]);
    expect(await rw.writeLock().getParticipantNodes()).toEqual([]);
    await read.release();
    expect(await client.getChildren('/rw')).toEqual([]);
  });

  it('downgrades inside the write lock’s runExclusive, without being told', async () => {
    const rw = new InterProcessReadWriteLock(client, '/rw');
    const nodes = await rw.writeLock().runExclusive(async () => {
      const read = await rw.readLock().acquire({ timeoutMs: 1_000 });
      const write = rw.writeLock().getLockPath() as string;
      await read.release();
      return { read: read.node, write };
    });
    expect(nodes.read.slice(-10)).toBe(nodes.write.slice(-10));
  });

  it('refuses an upgrade at once with LockUpgradeError, creating no node; a held write lock re-enters', async () => {
    const rw = new InterProcessReadWriteLock(client, '/rw');
    const read = await rw.readLock().acquire();
    const err = await rw.writeLock().acquire({ reenter: read }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockUpgradeError);
    expect(err).toMatchObject({ code: 'LOCK_UPGRADE', name: 'LockUpgradeError', path: '/rw' });
    await expect(rw.writeLock().tryAcquire({ reenter: read })).rejects.toBeInstanceOf(LockUpgradeError);
    await expect(rw.readLock().runExclusive(() => rw.writeLock().runExclusive(() => 1))).rejects.toBeInstanceOf(LockUpgradeError);
    expect(await client.getChildren('/rw')).toEqual([read.node.slice('/rw/'.length)]);
    await read.release();

    const write = await rw.writeLock().acquire();
    const downgraded = await rw.readLock().acquire({ reenter: write });
    const again = await rw.writeLock().acquire({ reenter: write, timeoutMs: 1_000 });
    expect(again.node).toBe(write.node);
    await Promise.all([again.release(), write.release(), downgraded.release()]);
  });

  it('checks its options', () => {
    expect(() => new InterProcessReadWriteLock(client, '/')).toThrow(InvalidArgumentError);
    expect(() => new InterProcessReadWriteLock(client, '/rw', { data: 1 as unknown as string })).toThrow(InvalidArgumentError);
  });
});
