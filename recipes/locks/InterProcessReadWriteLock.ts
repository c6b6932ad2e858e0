import debug from 'debug';
import { describeValue, InvalidArgumentError, nodeName, type ZkClient, ZkError, type ZkErrorOptions } from '../../src/recipeKit';
import { InterProcessMutex, holdingOf, scopedHolding, type AcquirePlan } from './InterProcessMutex';
import type { Lease } from './Lease';
import type { LockDriver, NodeToCreate } from './LockInternals';

const log = debug('zk-recipes:locks:rwlock');

/** The name in a read lock node: `_c_<uuid>-__READ__NNNNNNNNNN`. Curator's, and as long as the write name on purpose. */
export const READ_LOCK_NAME = '__READ__';
/** The name in a write lock node: `_c_<uuid>-__WRIT__NNNNNNNNNN`. */
export const WRITE_LOCK_NAME = '__WRIT__';
/** Read and write nodes share one parent, one sequence counter and one order. */
const SORT_NAMES: readonly string[] = Object.freeze([READ_LOCK_NAME, WRITE_LOCK_NAME]);

/** Whether a lock node of the read-write lock is a write node (the CLI reads them with this too). */
export function isWriteNode(name: string): boolean {
  return name.includes(WRITE_LOCK_NAME);
}

/**
 * An execution context that holds the read lock (and not the write lock) asked for the write
 * lock. Upgrading is not supported, as in Curator: the write node would queue behind the
 * context's own read node and wait forever, so the acquire fails at once and creates no node.
 */
export class LockUpgradeError extends ZkError {
  override name = 'LockUpgradeError';
  declare readonly code: 'LOCK_UPGRADE';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super('LOCK_UPGRADE', message, options);
  }
}

/**
 * The write lock's driver: a writer holds only at the head of all nodes, read or write, and
 * waits on the node just before it. It re-lists on every wake-up, because a downgrade can put a
 * read node ahead of a waiting writer (CURATOR-621).
 */
export function writeLockDriver(): LockDriver {
  return {
    lockName: WRITE_LOCK_NAME,
    sortNames: SORT_NAMES,
    relistOnWake: true,
    tokenFromOwnNode: false,
    handOff: false,
    decide(before) {
      return before.length === 0 ? { holds: true } : { holds: false, watch: before[before.length - 1] };
    },
  };
}

/** A lock node's sequence, as ZooKeeper wrote it (a wrapped one keeps its minus sign). */
function sequenceText(name: string): string {
  const at = Math.max(name.lastIndexOf(WRITE_LOCK_NAME), name.lastIndexOf(READ_LOCK_NAME));
  return name.slice(at + WRITE_LOCK_NAME.length);
}

/**
 * The read lock's driver. A reader holds when no write node sorts before its own, and otherwise
 * waits on the lowest write node before it (as Curator 5.x does: the reader wakes only when that
 * writer goes, then decides again). A write node with the reader's own sequence is not in its way:
 * it is the write lock the read node was downgraded from (sequences are unique under a parent, and
 * a downgraded read node takes its writer's, CURATOR-621).
 */
export function readLockDriver(): LockDriver {
  return {
    lockName: READ_LOCK_NAME,
    sortNames: SORT_NAMES,
    relistOnWake: true,
    tokenFromOwnNode: false,
    handOff: false,
    decide(before, ours) {
      const own = sequenceText(ours);
      const writer = before.find((name) => isWriteNode(name) && sequenceText(name) !== own);
      return writer === undefined ? { holds: true } : { holds: false, watch: writer };
    },
  };
}

/**
 * The read node of a downgrade: a plain EPHEMERAL `__READ__<the write node's sequence>`, so that it
 * sorts at the writer's place and a queued writer cannot slip in when the write lock is released
 * (CURATOR-621, Curator 5.5+).
 */
export function downgradeNode(writeNode: string): NodeToCreate {
  log('downgrade: a read node at the sequence of %s', writeNode);
  return { name: `${READ_LOCK_NAME}${sequenceText(nodeName(writeNode))}`, mode: 'EPHEMERAL' };
}

/** One of the two locks: a mutex whose participants are only its own kind of node, as Curator's. */
class ReadWriteMutex extends InterProcessMutex {
  constructor(
    client: ZkClient,
    path: string,
    private readonly lockName: string,
    driver: LockDriver,
    data: Buffer | string | undefined,
  ) {
    super(client, path, { driver, data, recipe: lockName === READ_LOCK_NAME ? 'read' : 'write' });
  }

  /** This lock's nodes (read or write) in lock order, as full paths. */
  override async getParticipantNodes(): Promise<string[]> {
    return (await super.getParticipantNodes()).filter((node) => nodeName(node).includes(this.lockName));
  }
}

/** The read lock: downgrades a hold of the write lock passed as `reenter`, or held by the enclosing runExclusive. */
class ReadLock extends ReadWriteMutex {
  constructor(
    client: ZkClient,
    path: string,
    data: Buffer | string | undefined,
    private readonly writeLock: () => InterProcessMutex,
  ) {
    super(client, path, READ_LOCK_NAME, readLockDriver(), data);
  }

  protected override plan(reenter: Lease | undefined): AcquirePlan {
    const write = reenter !== undefined ? holdingOf(reenter) : scopedHolding(this) ? undefined : scopedHolding(this.writeLock());
    if (write?.mutex === this.writeLock()) return { node: downgradeNode(write.acquisition.node) };
    return super.plan(reenter);
  }
}

/** The write lock: refuses an upgrade from the read lock instead of deadlocking. */
class WriteLock extends ReadWriteMutex {
  constructor(
    client: ZkClient,
    path: string,
    data: Buffer | string | undefined,
    private readonly readLock: () => InterProcessMutex,
  ) {
    super(client, path, WRITE_LOCK_NAME, writeLockDriver(), data);
  }

  protected override plan(reenter: Lease | undefined): AcquirePlan {
    const read = reenter !== undefined ? holdingOf(reenter) : scopedHolding(this) ? undefined : scopedHolding(this.readLock());
    if (read?.mutex === this.readLock()) {
      throw new LockUpgradeError(`the read lock of ${this.path} is held here: the write lock cannot be taken (no upgrade; release the read lock first)`, {
        path: this.path,
      });
    }
    return super.plan(reenter);
  }
}

/** Options of an InterProcessReadWriteLock. */
export interface InterProcessReadWriteLockOptions {
  /** The data of every lock node; default the client's `defaultData` (the local IP address, as Curator writes). */
  data?: Buffer | string;
}

/**
 * A re-entrant, fair read-write lock across processes, wire-compatible with Curator's
 * InterProcessReadWriteLock: read nodes `<path>/_c_<uuid>-__READ__NNNNNNNNNN` and write nodes
 * `<path>/_c_<uuid>-__WRIT__NNNNNNNNNN` under one parent, ordered by their shared sequence, so Java
 * services using Curator and Node services using zk-recipes share one lock.
 *
 * - **Shared reads, exclusive writes.** Any number of readers hold together while no writer does;
 *   a writer holds alone.
 * - **Fair.** Everyone is served in the order they asked (their node's sequence): a reader that
 *   arrives behind a queued writer waits until that writer is done.
 * - **Herd-free for writers.** A writer watches the node just before it; a reader watches the
 *   lowest writer before it, as Curator's does.
 * - **Re-entrant where you ask for it**, like InterProcessMutex: inside a `runExclusive` callback,
 *   or by passing the lease you hold as `reenter`.
 * - **Downgrade.** A holder of the write lock may take the read lock (inside the write lock's
 *   `runExclusive`, or passing the write lease as `reenter`), then release the write lock, and keep
 *   reading; its read node sorts at the writer's place, so a writer queued meanwhile cannot slip in
 *   (CURATOR-621).
 * - **No upgrade.** Asking for the write lock inside the read lock's `runExclusive`, or passing a
 *   read lease as `reenter`, rejects at once with LockUpgradeError (in Curator it would wait
 *   forever). A flow that holds a read lease and asks for the write lock without saying so is a
 *   new contender: it waits behind its own read node until its timeout.
 * - **Fencing tokens.** A writer's token is larger than those of all holders before it, and a
 *   reader's is larger than those of the writers before it; readers holding together may share one.
 * - **SUSPENDED / LOST.** As InterProcessMutex: a lease's `signal` aborts with a LockLostError when
 *   the session is LOST, when the connection is SUSPENDED under the 'standard' error policy, or when
 *   the node is deleted or belongs to another session. A waiter whose session is lost starts again
 *   with a new node; a timed-out or aborted acquire deletes its node. A downgrade asked for after
 *   the write lock's signal aborted is not safe: the write lease still counts as held.
 *
 * @example
 * ```ts
 * const rw = new InterProcessReadWriteLock(client, '/locks/catalog');
 * {
 *   await using lease = await rw.readLock().acquire({ timeoutMs: 5_000 });
 *   await readCatalog({ signal: lease.signal });
 * }
 * await rw.writeLock().runExclusive((signal) => rebuildCatalog({ signal }));
 * ```
 */
export class InterProcessReadWriteLock {
  /** The lock's parent path. */
  readonly path: string;
  private readonly writeMutex: WriteLock;
  private readonly readMutex: ReadWriteMutex;

  constructor(
    readonly client: ZkClient,
    path: string,
    options: InterProcessReadWriteLockOptions = {},
  ) {
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`options must be an object, got ${describeValue(options)}`);
    const { data } = options;
    if (data !== undefined && typeof data !== 'string' && !Buffer.isBuffer(data)) {
      throw new InvalidArgumentError(`data must be a Buffer or a string, got ${describeValue(data)}`);
    }
    this.writeMutex = new WriteLock(client, path, data, () => this.readMutex);
    this.readMutex = new ReadLock(client, path, data, () => this.writeMutex);
    this.path = this.writeMutex.path;
  }

  /**
   * The shared lock, held by any number of readers while no writer holds. Its
   * `getParticipantNodes()` lists read nodes only. A holder of the write lock gets it at once.
   */
  readLock(): InterProcessMutex {
    return this.readMutex;
  }

  /**
   * The exclusive lock. Its `acquire`, `tryAcquire` and `runExclusive` reject with LockUpgradeError
   * inside the read lock's `runExclusive`, or given a read lease as `reenter`. Its
   * `getParticipantNodes()` lists write nodes only.
   */
  writeLock(): InterProcessMutex {
    return this.writeMutex;
  }
}
