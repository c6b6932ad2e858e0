import type { ZkClient } from '../../src/recipeKit';
import { checkItems } from './DistributedQueue';
import { QueueBase, type PutOptions, type QueueOptions } from './QueueBase';
import { PRIORITY_ORDER, priorityItemName } from './naming';

/**
 * A distributed priority queue, wire-compatible with Curator's DistributedPriorityQueue: the
 * DistributedQueue machinery and guarantees (see {@link DistributedQueue}: lock-safe at least
 * once, otherwise at most once; the same SUSPENDED and LOST behaviour), with the priority in the
 * node name.
 *
 * - **Nodes.** `queue-` + ('1' if priority >= 0, else '0') + the priority as 8 upper-case hex digits
 *   of its 32-bit two's complement (`%08X`), + the sequence: priority 5 is
 *   `queue-1000000050000000012`, -1 is `queue-0FFFFFFFF0000000013`.
 * - **Order.** Lexical order of the names, as in Curator: lower priorities first, FIFO within a
 *   priority. When the children change between two items, a consumer lists them again before
 *   taking the next one, so a more urgent item put meanwhile goes first.
 * - **Requeue.** A failed item (lock-safe, errorMode 'requeue') goes back with its priority, at the
 *   end of that priority. Curator's requeue drops it to a plain `queue-NNNNNNNNNN`.
 * - **SUSPENDED / LOST.** As {@link DistributedQueue}: consumers keep their cursor and list again on
 *   RECONNECTED; on LOST, a lock-safe item in hand may be delivered again elsewhere, and its
 *   handler's `signal` aborts.
 *
 * @example
 * ```ts
 * const queue = new DistributedPriorityQueue<string>(client, '/tasks', { lockPath: '/tasks-locks' });
 * await queue.put('rebuild index', 10);
 * await queue.put('page the on-call', -100); // consumed first
 * ```
 */
export class DistributedPriorityQueue<T> extends QueueBase<T> {
  constructor(client: ZkClient, path: string, options?: QueueOptions<T>) {
    super(client, path, options, PRIORITY_ORDER);
  }

  /**
   * Puts one item with a priority, a 32-bit signed integer: lower values are consumed first.
   *
   * @throws InvalidArgumentError for a priority that is not a 32-bit integer; otherwise as {@link DistributedQueue.put}.
   */
  async put(item: T, priority: number, options?: PutOptions): Promise<string> {
    return this.putNode(priorityItemName(priority), [item], options);
  }

  /** Puts several items into one node with one priority. See {@link DistributedQueue.putMulti}. */
  async putMulti(items: readonly T[], priority: number, options?: PutOptions): Promise<string> {
    return this.putNode(priorityItemName(priority), checkItems(items), options);
  }
}
