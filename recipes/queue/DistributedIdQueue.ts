import debug from 'debug';
import { isZkError, type NodeData, NodeWatch, serverError, type ZkClient } from '../../src/recipeKit';
import { QueueBase, type PutOptions, type QueueOptions } from './QueueBase';
import { QueueItems, type ItemLock } from './QueueItems';
import { ID_ORDER, QUEUE_ITEM_NAME, fixId, idItemName, parseId } from './naming';

const log = debug('zk-recipes:queue:id');

/**
 * A distributed queue whose items carry an id, wire-compatible with Curator's DistributedIdQueue:
 * items can be removed by id before they are consumed. The DistributedQueue machinery and
 * guarantees (see {@link DistributedQueue}: lock-safe at least once, otherwise at most once; the
 * same SUSPENDED and LOST behaviour).
 *
 * - **Nodes.** `queue-|<id>|` + the sequence, with every `/` and `|` in the id replaced by `_`
 *   (so ids 'a/b' and 'a|b' and 'a_b' are the same id).
 * - **Order.** FIFO: by the name without `|<id>|`, that is, by sequence.
 * - **Requeue.** A failed item goes back with its id, as in Curator.
 * - **SUSPENDED / LOST.** As {@link DistributedQueue}: consumers keep their cursor and list again on
 *   RECONNECTED; on LOST, a lock-safe item in hand may be delivered again elsewhere, and its
 *   handler's `signal` aborts.
 *
 * @example
 * ```ts
 * const orders = new DistributedIdQueue<Order>(client, '/orders', { lockPath: '/orders-locks' });
 * await orders.put(order, order.id);
 * await orders.remove(order.id); // cancelled before anyone consumed it
 * ```
 */
export class DistributedIdQueue<T> extends QueueBase<T> {
  private readonly items: QueueItems;

  constructor(client: ZkClient, path: string, options?: QueueOptions<T>) {
    super(client, path, options, ID_ORDER);
    this.items = new QueueItems(this.client, this.path, this.lockPath);
  }

  /**
   * Puts one item with an id (a non-empty string; `/` and `|` become `_`).
   *
   * @throws InvalidArgumentError for an empty id or one ZooKeeper refuses in a node name; otherwise
   *   as {@link DistributedQueue.put}.
   */
  async put(item: T, id: string, options?: PutOptions): Promise<string> {
    return this.putNode(idItemName(id), [item], options);
  }

  /**
   * Deletes the items with this id that no consumer has yet; resolves to how many it deleted.
   * In lock-safe mode an item a consumer is handling (its lock is taken) is left alone. The id is
   * compared after `/` and `|` become `_`, as it was written (Curator compares the raw id, so
   * it misses ids with those characters). Each item is deleted under our EPHEMERAL lock node, in
   * that node's session only (item and lock node in one transaction where the transport has
   * multi): when the session ends midway, the item's removal starts over in the next session, and
   * never touches a lock another consumer took meanwhile, nor the item it holds. An item whose
   * delete went through just before the session ended may then not be counted.
   */
  async remove(id: string): Promise<number> {
    const fixed = fixId(id);
    this.assertOpen();
    let children: string[];
    try {
      children = await this.client.getChildren(this.path);
    } catch (err) {
      if (isZkError(err, 'NONODE')) return 0;
      throw err;
    }
    let count = 0;
    for (const name of children) {
      if (!name.startsWith(QUEUE_ITEM_NAME) || parseId(name).id !== fixed) continue;
      if (await this.removeNode(name)) count++;
    }
    log('%s: removed %d item(s) with id %s', this.path, count, fixed);
    return count;
  }

  /**
   * Deletes one item under our EPHEMERAL lock node, in that node's session only: once the session
   * has ended, our lock is gone and another consumer may have locked the item (its lock node at
   * the same path), so nothing of ours may touch either in a later session. A session that ends
   * midway starts this item's removal over in the next one.
   */
  private async removeNode(name: string): Promise<boolean> {
    if (this.lockPath === undefined) return deleted(this.client.delete(this.items.itemPath(name)));
    // Our sessions that ended during this removal: a lock node of theirs stands until the server
    // has expired them, and is not another consumer's.
    const ended = new Set<bigint>();
    for (;;) {
      const before = this.client.session;
      const created = await this.items.lock(name);
      // A create retried after a lost reply runs in the next session when ours ended meanwhile.
      if (before?.isEnded) ended.add(before.id);
      if (created === 'noParent') throw serverError('NONODE', { path: this.items.lockNode(name), message: `the lock path ${this.lockPath} is missing` });
      const lock = created === 'exists' ? await this.standingLock(name, ended) : created;
      if (lock === 'taken') return false;
      if (lock === 'again') continue;
      try {
        const { deleted: done, lockReleased } = await this.items.deleteUnderLock(name, lock);
        if (!lockReleased) await this.items.releaseLock(lock);
        return done;
      } catch (err) {
        await this.items.releaseLock(lock);
        if (!isZkError(err, 'SESSION_LOST') || lock.session.closedByClient) throw err;
        ended.add(lock.session.id);
        log('%s: the session %s of our lock on %s ended: removing it again in the next session', this.path, lock.session, name);
      }
    }
  }

  /**
   * The lock node our create found standing: ours when it is of the current session (a create
   * retried after a lost reply); 'again' when it is gone, or once a node of our ended session is
   * (the server deletes it when it expires that session); else 'taken' by a consumer.
   */
  private async standingLock(name: string, ended: ReadonlySet<bigint>): Promise<ItemLock | 'taken' | 'again'> {
    const node = this.items.lockNode(name);
    const stat = await this.client.exists(node);
    // The reply came in this session: events (an end of the session) come after replies.
    const session = this.client.session;
    if (stat === null) return 'again';
    if (session !== undefined && stat.ephemeralOwner === session.id) return { node, session };
    if (!ended.has(stat.ephemeralOwner)) return 'taken';
    log('%s: our lock on %s of the ended session 0x%s still stands: waiting for it to go', this.path, name, stat.ephemeralOwner.toString(16));
    await nodeGone(this.client, node, stat.ephemeralOwner);
    return 'again';
  }
}

/** Resolves once the node at `path` is no longer the one of session `owner`, or the watch ends. */
async function nodeGone(client: ZkClient, path: string, owner: bigint): Promise<void> {
  let wake!: () => void;
  const woken = new Promise<void>((resolve) => (wake = resolve));
  const isOurs = (node: NodeData | null) => node !== null && node.stat.ephemeralOwner === owner;
  const watch = new NodeWatch(client, path, (node) => !isOurs(node) && wake(), { creation: false, onEnd: () => wake(), compressed: false });
  try {
    if (isOurs(await watch.start())) await woken;
  } finally {
    await watch.close();
  }
}

/** True once the delete is done; false when the node was already gone. */
async function deleted(deletion: Promise<void>): Promise<boolean> {
  try {
    await deletion;
    return true;
  } catch (err) {
    if (isZkError(err, 'NONODE')) return false;
    throw err;
  }
}
