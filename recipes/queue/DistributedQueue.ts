import { InvalidArgumentError, type ZkClient } from '../../src/recipeKit';
import { QueueBase, type PutOptions, type QueueOptions } from './QueueBase';
import { FIFO_ORDER, QUEUE_ITEM_NAME } from './naming';

/**
 * A distributed FIFO queue, wire-compatible with Curator's DistributedQueue: producers and
 * consumers in any number of processes share one queue node, with Java services using Curator on
 * the same path (pick the serializer they use; see {@link QueueOptions.serializer}).
 *
 * - **Nodes.** Each put creates one PERSISTENT_SEQUENTIAL `<path>/queue-NNNNNNNNNN`; `putMulti`
 *   puts several items into one node, as Curator does. Consumers take nodes in lexical order of
 *   their names, that is, in the order they were put. Nodes that do not start with `queue-` are
 *   ignored.
 * - **Consuming.** `start(handler)` or `for await (const item of queue.consume())`. A consumer
 *   lists the children once with a watch and keeps a cursor of the names it has handled: only a
 *   change in the children wakes it, and it never reads a node's data twice. Each consumer takes
 *   at most `maxItems` nodes at a time (default 1: strictly one after the other).
 * - **Lock-safe mode, at least once** (`lockPath`). Before it reads an item, a consumer creates
 *   EPHEMERAL `<lockPath>/<itemName>`; a consumer that finds the lock taken skips the item and
 *   watches the lock. The item is deleted only after the handler resolves, then the lock node. A
 *   consumer whose process or session dies leaves the item, and its lock goes with its session,
 *   so another consumer gets the item. A handler that throws: `errorMode` 'requeue' (default) puts
 *   the item back as a new `queue-` node at the end of the queue (the name never grows: CURATOR-56);
 *   'delete' drops it. An item may be handled more than once (after a crash, or a LOST session),
 *   never lost.
 * - **Without `lockPath`, at most once.** A consumer reads the item, deletes it with the version it
 *   read (so exactly one consumer wins it), then handles it. An item whose consumer dies, or whose
 *   handler throws, is lost; an item is never handled twice.
 * - **Producers.** A put creates the queue node if needed (persistent, parents as containers, as
 *   Curator does). A put whose reply is lost to a connection loss is retried, and may then enqueue
 *   the item twice (Curator's puts behave the same).
 * - **SUSPENDED.** Consumers keep their cursor and their items in hand; handlers keep running.
 *   Operations wait for the connection under the client's retry policy.
 * - **LOST.** Consumers list the children again on the new session (also after a partition longer
 *   than the session timeout: CURATOR-623), keeping their cursor. In lock-safe mode the lock of each
 *   item in hand went with the session: its handler's `signal` aborts with QueueItemLockLostError,
 *   and the item may be delivered again elsewhere (the at-least-once contract). When such a handler
 *   still resolves, the item is deleted; when it throws, the item is left as it is (a requeued copy
 *   would be a second one).
 *
 * @example
 * ```ts
 * const queue = new DistributedQueue<{ id: number }>(client, '/jobs', { lockPath: '/jobs-locks' });
 * await queue.put({ id: 1 });
 * queue.start(async (job, { signal }) => {
 *   await run(job, signal); // deleted once this resolves; requeued if it throws
 * });
 * // …
 * await queue.close();
 * ```
 */
export class DistributedQueue<T> extends QueueBase<T> {
  constructor(client: ZkClient, path: string, options?: QueueOptions<T>) {
    super(client, path, options, FIFO_ORDER);
  }

  /**
   * Puts one item at the end of the queue. Resolves to the node's path.
   *
   * @throws QueueSerializationError when the serializer cannot write the item; InvalidArgumentError
   *   when the node would exceed MAX_DATA_BYTES. Nothing is enqueued in either case.
   */
  async put(item: T, options?: PutOptions): Promise<string> {
    return this.putNode(QUEUE_ITEM_NAME, [item], options);
  }

  /**
   * Puts several items into one node at the end of the queue: they are consumed together, in
   * this order, by one consumer. Needs a framing serializer (the default, or curatorItemSerializer).
   *
   * @throws InvalidArgumentError for an empty list or an oversized node; QueueSerializationError as for `put`.
   */
  async putMulti(items: readonly T[], options?: PutOptions): Promise<string> {
    return this.putNode(QUEUE_ITEM_NAME, checkItems(items), options);
  }
}

/** A non-empty array of items, for putMulti. */
export function checkItems<T>(items: readonly T[]): readonly T[] {
  if (!Array.isArray(items) || items.length === 0) throw new InvalidArgumentError('putMulti needs a non-empty array of items');
  return items;
}
