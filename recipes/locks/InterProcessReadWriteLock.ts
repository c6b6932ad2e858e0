import debug from 'debug';
import type { ZkClient } from '../../src/client/ZkClient';
import { InvalidArgumentError, ZkError, type ZkErrorOptions } from '../../src/errors';
import { nodeName } from '../../src/paths';
import { describeValue } from '../../src/validate';
import type { AcquireOptions } from './InterProcessLock';
import { InterProcessMutex } from './InterProcessMutex';
import type { Lease } from './Lease';
import type { LockDriver } from './LockInternals';

const log = debug('zk-recipes:locks:rwlock');

/** The name in a read lock node: `_c_<uuid>-__READ__NNNNNNNNNN`. Curator's, and as long as the write name on purpose. */
export const READ_LOCK_NAME = '__READ__';
/** The name in a write lock node: `_c_<uuid>-__WRIT__NNNNNNNNNN`. */
export const WRITE_LOCK_NAME = '__WRIT__';
/** Read and write nodes share one parent, one sequence counter and one order. */
const SORT_NAMES: readonly string[] = Object.freeze([READ_LOCK_NAME, WRITE_LOCK_NAME]);

function isWriteNode(name: string): boolean {
  return name.includes(WRITE_LOCK_NAME);
}

/**
 * An execution context that holds the read lock (and not the write lock) asked for the write
 * lock. Upgrading is not supported, as in Curator: the write node would queue behind the
 * context's own read node and wait forever, so the acquire fails at once and creates no node.
 */
export class LockUpgradeError extends ZkError {
  override name = 'LockUpgradeError';
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
    decide(before) {
      return before.length === 0 ? { holds: true } : { holds: false, watch: before[before.length - 1] };
    },
  };
}

/**
 * The read lock's driver. A reader holds when no write node sorts before its own, and otherwise
 * waits on the lowest write node before it (as Curator 5.x does: the reader wakes only when that
 * writer goes, then decides again). A reader in an execution context that holds the write lock
 * holds at once (the downgrade), and its node is a plain EPHEMERAL
 * `_c_<uuid>-__READ__<the write node's sequence>`, so that it sorts at the writer's place and a
 * queued writer cannot slip in when the write lock is released (CURATOR-621, Curator 5.5+).
 *
 * @param heldWriteNode the write node the acquiring execution context holds, if any.
 */
export function readLockDriver(heldWriteNode: () => string | undefined): LockDriver {
  return {
    lockName: READ_LOCK_NAME,
    sortNames: SORT_NAMES,
    relistOnWake: true,
    decide(before) {
      if (heldWriteNode() !== undefined) return { holds: true };
      const writer = before.find(isWriteNode);
      return writer === undefined ? { holds: true } : { holds: false, watch: writer };
    },
    nodeToCreate() {
      const writeNode = heldWriteNode();
      if (writeNode === undefined) return undefined;
      const name = nodeName(writeNode);
      const sequence = name.slice(name.lastIndexOf(WRITE_LOCK_NAME) + WRITE_LOCK_NAME.length);
      log('downgrade: a read node at the sequence of %s', writeNode);
      return { name: `${READ_LOCK_NAME}${sequence}`, mode: 'EPHEMERAL' };
    },
  };
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
    super(client, path, { driver, data });
  }

  /** This lock's nodes (read or write) in lock order, as full paths. */
  override async getParticipantNodes(): Promise<string[]> {
    return (await super.getParticipantNodes()).filter((node) => nodeName(node).includes(this.lockName));
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

  override acquire(options?: AcquireOptions): Promise<Lease> {
    const refused = this.refuseUpgrade();
    return refused ?? super.acquire(options);
  }

  override tryAcquire(): Promise<Lease | undefined> {
    const refused = this.refuseUpgrade();
    return refused ?? super.tryAcquire();
  }

  private refuseUpgrade(): Promise<never> | undefined {
    if (!this.readLock().isOwnedByCurrentContext() || this.isOwnedByCurrentContext()) return undefined;
    return Promise.reject(
      new LockUpgradeError(`this execution context holds the read lock of ${this.path}: it cannot take the write lock (no upgrade; release the read lock first)`, {
        path: this.path,
      }),
    );
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
 * - **Re-entrant** per async execution context for each lock, like InterProcessMutex.
 * - **Downgrade.** A context that holds the write lock may take the read lock, then release the
 *   write lock, and keep reading; its read node sorts at the writer's place, so a writer queued
 *   meanwhile cannot slip in (CURATOR-621).
 * - **No upgrade.** Asking for the write lock while the context holds only the read lock rejects
 *   at once with LockUpgradeError (in Curator it would wait forever).
 * - **Fencing tokens.** A writer's token is larger than those of all holders before it, and a
 *   reader's is larger than those of the writers before it; readers holding together may share one.
 * - **SUSPENDED / LOST.** As InterProcessMutex: a lease's `signal` aborts with a LockLostError when
 *   the session is LOST, when the connection is SUSPENDED under the 'standard' error policy, or when
 *   the node is deleted or belongs to another session. A waiter whose session is lost starts again
 *   with a new node; a timed-out or aborted acquire deletes its node. A downgrade asked for after
 *   the write lock's signal aborted is not safe: the context still counts as holding the write lock.
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
    this.readMutex = new ReadWriteMutex(client, path, READ_LOCK_NAME, readLockDriver(() => this.writeMutex.getLockPath()), data);
    this.path = this.writeMutex.path;
  }

  /**
   * The shared lock, held by any number of readers while no writer holds. Its
   * `getParticipantNodes()` lists read nodes only. A context holding the write lock gets it at once.
   */
  readLock(): InterProcessMutex {
    return this.readMutex;
  }

  /**
   * The exclusive lock. Its `acquire`, `tryAcquire` and `runExclusive` reject with LockUpgradeError
   * when the context holds the read lock but not the write lock. Its `getParticipantNodes()` lists
   * write nodes only.
   */
  writeLock(): InterProcessMutex {
    return this.writeMutex;
  }
}
