import debug from 'debug';
import type { Session } from '../../src/client/Session';
import type { ZkClient } from '../../src/client/ZkClient';
import { isZkError } from '../../src/errors';
import { joinPath } from '../../src/paths';
import { isRetryableError } from '../../src/retry';

const log = debug('zk-recipes:queue:items');

/** A lock-safe claim: our EPHEMERAL lock node and the session it belongs to. */
export interface ItemLock {
  readonly node: string;
  readonly session: Session;
}

/**
 * The operations on one queue's item nodes and lock nodes, each a few requests: read, take, lock,
 * requeue, delete, release. They carry no state of their own; the consumer engine decides when.
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
  async read(name: string): Promise<Buffer | undefined> {
    try {
      return (await this.client.getData(this.itemPath(name))).data;
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
  async takeAtMostOnce(name: string): Promise<Buffer | undefined> {
    const itemPath = this.itemPath(name);
    try {
      const { data, stat } = await this.client.getData(itemPath);
      await this.client.delete(itemPath, { version: stat.version });
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
  async lock(name: string): Promise<ItemLock | 'exists' | 'noParent'> {
    const node = this.lockNode(name);
    try {
      await this.client.create(node, { mode: 'EPHEMERAL' });
    } catch (err) {
      if (isZkError(err, 'NONODE')) return 'noParent';
      if (isZkError(err, 'NODEEXISTS')) return 'exists';
      throw err;
    }
    // The create's reply came in this session: events (an end of the session) come after replies.
    return { node, session: this.client.session as Session };
  }

  /**
   * Puts a failed item back as a new node at the end of its order, under `prefix`: created first,
   * then the old one deleted, so a crash in between repeats the item rather than losing it (the
   * new name is the order's prefix, never the old name plus more: CURATOR-56). Resolves with the
   * new node's name.
   */
  async requeue(name: string, prefix: string, data: Buffer): Promise<string> {
    const created = await this.client.create(joinPath(this.path, prefix), { mode: 'PERSISTENT_SEQUENTIAL', data });
    log('%s: %s requeued as %s', this.path, name, created);
    await this.client.delete(this.itemPath(name), { quietly: true });
    return created;
  }

  /**
   * Deletes a finished item, and tries again across connection problems until it is gone or `until`
   * aborts (the first try is made either way). Rejects with the error that stopped it.
   */
  async deleteItem(name: string, until: AbortSignal): Promise<void> {
    for (;;) {
      try {
        await this.client.delete(this.itemPath(name), { quietly: true });
        return;
      } catch (err) {
        if (!isRetryableError(err) || until.aborted) throw err;
        log('%s: deleting %s: %s; trying again once connected', this.path, name, (err as Error).message);
        await this.client.blockUntilConnected({ signal: until });
      }
    }
  }

  /**
   * Deletes our lock node, if it is still ours: after our session ended it went with it, and a
   * node at that path belongs to another consumer. The owner check narrows the gap to one round
   * trip. A connection problem leaves the delete to the background (guaranteed).
   */
  async releaseLock(lock: ItemLock): Promise<void> {
    if (lock.session.isEnded) return;
    try {
      const stat = await this.client.exists(lock.node, { session: lock.session });
      if (stat === null || stat.ephemeralOwner !== lock.session.id) return;
      await this.client.delete(lock.node, { version: stat.version, quietly: true, guaranteed: true });
    } catch (err) {
      // Ephemeral: at worst it goes with the session.
      log('%s: releasing the lock %s: %s', this.path, lock.node, (err as Error).message);
    }
  }
}
