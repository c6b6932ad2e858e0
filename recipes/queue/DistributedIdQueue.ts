import debug from 'debug';
import type { ZkClient } from '../../src/client/ZkClient';
import { isZkError } from '../../src/errors';
import { joinPath } from '../../src/paths';
import { QueueBase, type PutOptions, type QueueOptions } from './QueueBase';
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
  constructor(client: ZkClient, path: string, options?: QueueOptions<T>) {
    super(client, path, options, ID_ORDER);
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
   * it misses ids with those characters).
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

  private async removeNode(name: string): Promise<boolean> {
    const itemPath = joinPath(this.path, name);
    if (this.lockPath === undefined) return deleted(this.client.delete(itemPath));
    const lockNode = joinPath(this.lockPath, name);
    try {
      await this.client.create(lockNode, { mode: 'EPHEMERAL' });
    } catch (err) {
      // Being consumed, or already consumed and its lock is on the way out.
      if (isZkError(err, 'NODEEXISTS')) return false;
      throw err;
    }
    try {
      return await deleted(this.client.delete(itemPath));
    } finally {
      await this.client.delete(lockNode, { quietly: true, guaranteed: true }).catch((err: unknown) => {
        log('%s: releasing the lock on %s: %s', this.path, name, String(err));
      });
    }
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
