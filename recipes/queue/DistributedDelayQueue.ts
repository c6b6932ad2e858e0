import type { ZkClient } from '../../src/recipeKit';
import { checkItems } from './DistributedQueue';
import { QueueBase, type PutOptions, type QueueOptions } from './QueueBase';
import { DELAY_ORDER, delayItemName } from './naming';

/**
 * A distributed delay queue, wire-compatible with Curator's DistributedDelayQueue: each item is
 * delivered at or after the time given with it. The DistributedQueue machinery and guarantees
 * (see {@link DistributedQueue}: lock-safe at least once, otherwise at most once; the same
 * SUSPENDED and LOST behaviour), with the time in the node name.
 *
 * - **Nodes.** `queue-|` + the epoch millis in upper-case hex, at least 8 digits (`%08X`), + `|`,
 *   + the sequence.
 * - **Order.** By time, then by sequence. A consumer that has nothing due sets one timer for the
 *   earliest item, besides its children watch: it neither polls nor delivers early. Times are read
 *   against the consumer's clock, as Curator does: keep clocks in sync.
 * - **Requeue.** A failed item goes back with its time, already past, so it is due at once (Curator
 *   drops the time, to the same effect).
 * - **SUSPENDED / LOST.** As {@link DistributedQueue}: consumers keep their cursor and list again on
 *   RECONNECTED; on LOST, a lock-safe item in hand may be delivered again elsewhere, and its
 *   handler's `signal` aborts.
 *
 * @example
 * ```ts
 * const reminders = new DistributedDelayQueue<string>(client, '/reminders');
 * await reminders.put('call back', Date.now() + 60_000);
 * reminders.start((text) => notify(text)); // about a minute later
 * ```
 */
export class DistributedDelayQueue<T> extends QueueBase<T> {
  constructor(client: ZkClient, path: string, options?: QueueOptions<T>) {
    super(client, path, options, DELAY_ORDER);
  }

  /**
   * Puts an item to be delivered at or after `delayUntilEpochMs` (milliseconds since the epoch,
   * as `Date.now()`). A time in the past is due at once.
   *
   * @throws InvalidArgumentError unless the time is an integer from 1 to Number.MAX_SAFE_INTEGER;
   *   otherwise as {@link DistributedQueue.put}.
   */
  async put(item: T, delayUntilEpochMs: number, options?: PutOptions): Promise<string> {
    return this.putNode(delayItemName(delayUntilEpochMs), [item], options);
  }

  /** Puts several items into one node, all due at one time. See {@link DistributedQueue.putMulti}. */
  async putMulti(items: readonly T[], delayUntilEpochMs: number, options?: PutOptions): Promise<string> {
    return this.putNode(delayItemName(delayUntilEpochMs), checkItems(items), options);
  }
}
