import debug from 'debug';
import { isRetryableError, isZkError, joinPath, type Session, TransactionError, TransactionOutcomeUnknownError, type ZkClient } from '../../src/recipeKit';

const log = debug('zk-recipes:queue:items');

/** A lock-safe claim: our EPHEMERAL lock node and the session it belongs to. */
export interface ItemLock {
  readonly node: string;
  readonly session: Session;
}

/**
 * The operations on one queue's item nodes and lock nodes, each a few requests: read, take, lock,
 * requeue, delete, release. They carry no state of their own; the consumer engine decides when.
 * The claim operations (read, take, lock) take the consumer's closing signal: a close ends their
 * retries. A lock node whose create was cut off that way is EPHEMERAL, and goes with the session.
 */
export class QueueItems {
  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    private readonly lockPath: string | undefined,
  ) {}

  itemPath(name: string): string {
    return joinPath(this.path, name);
  }

  lockNode(name: string): string {
    return joinPath(this.lockPath as string, name);
  }

  /** The item's data; undefined when it is gone (consumed by another consumer). */
  async read(name: string, signal?: AbortSignal): Promise<Buffer | undefined> {
    try {
      return (await this.client.getData(this.itemPath(name), { signal })).data;
    } catch (err) {
      if (isZkError(err, 'NONODE')) return undefined;
      throw err;
    }
  }

  /**
   * Without a lock path: read, then delete with the read's version. The data when the delete was
   * ours; undefined when another consumer got it first. At most once: after an unknown outcome the
   * item may be gone unhandled.
   */
  async takeAtMostOnce(name: string, signal?: AbortSignal): Promise<Buffer | undefined> {
    const itemPath = this.itemPath(name);
    try {
      const { data, stat } = await this.client.getData(itemPath, { signal });
      await this.client.delete(itemPath, { version: stat.version, signal });
      return data;
    } catch (err) {
      if (isZkError(err, 'NONODE') || isZkError(err, 'BADVERSION')) return undefined;
      throw err;
    }
  }

  /**
   * Creates our EPHEMERAL lock node for `name`: the lock when it is ours, 'exists' when a node
   * stands there (another consumer's, or ours after a create retried across a lost reply: the
   * caller looks), 'noParent' when the lock path is missing.
   */
  async lock(name: string, signal?: AbortSignal): Promise<ItemLock | 'exists' | 'noParent'> {
    const node = this.lockNode(name);
    try {
      await this.client.create(node, { mode: 'EPHEMERAL', signal });
    } catch (err) {
      if (isZkError(err, 'NONODE')) return 'noParent';
      if (isZkError(err, 'NODEEXISTS')) return 'exists';
      throw err;
    }
    // The create's reply came in this session: events (an end of the session) come after replies.
    return { node, session: this.client.session as Session };
  }

  /**
   * Puts a failed item back as a new node at the end of its order, under `prefix` (the new name is
   * the order's prefix, never the old name plus more: CURATOR-56). Resolves with the new node's name,
   * or undefined when it went in but its name cannot be read back, or the old node was gone.
   * - Where the transport has multi (the protocol transport): the create and the delete of the old
   *   node are one transaction, so a crash can neither lose the item nor leave it twice. The commit
   *   carries a marker under the lock path: after a lost reply it is never sent blindly again, and
   *   when the lock's session ends before the marker is checked, it rejects with
   *   TransactionOutcomeUnknownError (the item is then once in the queue, under one name or the other).
   * - Else: created first, then the old one deleted, so a crash in between repeats the item rather
   *   than losing it.
   * `signal` (the lock's session's) ends the retries: once our lock is gone, another consumer may
   * hold the item, and a requeued copy would be a second one.
   */
  async requeue(name: string, prefix: string, data: Buffer, signal: AbortSignal): Promise<string | undefined> {
    const newPath = joinPath(this.path, prefix);
    if (this.client.supports('multi')) {
      try {
        const [created] = await this.client
          .transaction()
          .create(newPath, { mode: 'PERSISTENT_SEQUENTIAL', data })
          .delete(this.itemPath(name))
          .commit({ signal, markerParent: this.lockPath });
        log('%s: %s requeued as %s (one transaction)', this.path, name, created.path);
        return created.path;
      } catch (err) {
        if (err instanceof TransactionOutcomeUnknownError && err.applied) {
          log('%s: %s requeued (one transaction, its reply lost; the new name %s)', this.path, name, err.results[0]?.path ?? 'unknown');
          return err.results[0]?.path;
        }
        if (err instanceof TransactionError && err.failedIndex === 1 && err.failedCode === 'NONODE') return undefined;
        throw err;
      }
    }
    const created = await this.client.create(newPath, { mode: 'PERSISTENT_SEQUENTIAL', data, signal });
    log('%s: %s requeued as %s', this.path, name, created);
    await this.client.delete(this.itemPath(name), { quietly: true, signal });
    return created;
  }

  /**
   * Deletes a handled item, and tries again across connection problems until it is gone or `until`
   * aborts (the first try is made either way). Rejects with the error that stopped it. Where the
   * transport has multi and `lock` is held in a live session, the item and the lock node go in one
   * transaction (one round trip, and no lock node left behind); resolves true when the lock went
   * with it.
   */
  async deleteItem(name: string, until: AbortSignal, lock?: ItemLock): Promise<boolean> {
    for (;;) {
      try {
        if (lock !== undefined && !lock.session.isEnded && this.client.supports('multi')) {
          try {
            // In the lock's session only: in a later one the lock node's path may hold another consumer's.
            await this.client.transaction().delete(this.itemPath(name)).delete(lock.node).commit({ session: lock.session, markerParent: this.lockPath });
            return true;
          } catch (err) {
            if (err instanceof TransactionOutcomeUnknownError && err.applied) return true;
            // The item or the lock node gone, the session ended, or a lost reply that cannot be
            // checked any more: the plain delete below says whether the item is gone.
            if (!(err instanceof TransactionError && err.failedCode === 'NONODE') && !isZkError(err, 'SESSION_LOST') && !(err instanceof TransactionOutcomeUnknownError)) throw err;
          }
        }
        await this.client.delete(this.itemPath(name), { quietly: true });
        return false;
      } catch (err) {
        if (!isRetryableError(err) || until.aborted) throw err;
        log('%s: deleting %s: %s; trying again once connected', this.path, name, (err as Error).message);
        await this.client.blockUntilConnected({ signal: until });
      }
    }
  }

  /**
   * Deletes an item while our lock on it holds, in the lock's session only. Where the transport
   * has multi, the item and the lock node go in one transaction (`lockReleased`); else the item
   * alone, and the caller releases the lock. `deleted` is false when the item was gone already (or
   * when our lock node was, which leaves the item alone). Rejects with SessionLostError when the
   * lock's session ended first: the lock went with it, another consumer may hold the item now,
   * and nothing of ours may touch either in a later session.
   */
  async deleteUnderLock(name: string, lock: ItemLock): Promise<{ deleted: boolean; lockReleased: boolean }> {
    const itemPath = this.itemPath(name);
    const session = lock.session;
    if (!this.client.supports('multi')) {
      try {
        await this.client.delete(itemPath, { session });
        return { deleted: true, lockReleased: false };
      } catch (err) {
        if (isZkError(err, 'NONODE')) return { deleted: false, lockReleased: false };
        throw err;
      }
    }
    try {
      await this.client.transaction().delete(itemPath).delete(lock.node).commit({ session, markerParent: this.lockPath });
      return { deleted: true, lockReleased: true };
    } catch (err) {
      // A lost reply, and the marker shows the commit went in: ours.
      if (err instanceof TransactionOutcomeUnknownError && err.applied) return { deleted: true, lockReleased: true };
      // The session ended before the marker could be checked: as for a session that ended first,
      // the caller starts over in the next session.
      if (err instanceof TransactionOutcomeUnknownError && isZkError(err.cause, 'SESSION_LOST')) throw err.cause;
      if (!(err instanceof TransactionError) || err.failedCode !== 'NONODE') throw err;
      // The item gone (consumed, removed); or our lock node gone while its session lasts (deleted by hand).
      return { deleted: false, lockReleased: err.failedIndex === 1 };
    }
  }

  /**
   * Deletes our lock node, if it is still ours: after our session ended it went with it, and a
   * node at that path belongs to another consumer. The owner check and the delete run in the
   * lock's session only; a connection problem leaves the delete to the background (guaranteed),
   * in that session too. `signal` ends the wait for the server (the consumer closing): a delete
   * under way is then left to the background, and a node not yet checked goes with its session.
   */
  async releaseLock(lock: ItemLock, signal?: AbortSignal): Promise<void> {
    if (lock.session.isEnded) return;
    try {
      const stat = await this.client.exists(lock.node, { session: lock.session, signal });
      if (stat === null || stat.ephemeralOwner !== lock.session.id) return;
      await this.client.delete(lock.node, { version: stat.version, quietly: true, guaranteed: true, session: lock.session, signal });
    } catch (err) {
      // Ephemeral: at worst it goes with the session.
      log('%s: releasing the lock %s: %s', this.path, lock.node, (err as Error).message);
    }
  }
}
