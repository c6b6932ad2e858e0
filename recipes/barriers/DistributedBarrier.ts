import debug from 'debug';
import { abortReason, isZkError, validateClient, validateOptions, validateRecipePath, validateSignal, type ZkClient } from '../../src/recipeKit';
import { boundedWait, nodeBecomes, type BarrierWaitOptions } from './waits';

const log = debug('zk-recipes:barriers:barrier');

/**
 * A barrier that holds every waiter while its node exists, wire-compatible with Curator's
 * DistributedBarrier: `setBarrier()` creates the node at `path` (parents as containers),
 * `removeBarrier()` deletes it, and `waitOnBarrier()` waits until it is gone. Curator's
 * DistributedBarrier on the same path takes part.
 *
 * - A wait watches the node (no polling) and resolves once it is missing; it resolves at once when
 *   there is no barrier.
 * - **SUSPENDED / LOST.** A wait rides through both: the client retries its reads, and after a
 *   reconnect that could not keep the watch, or in a new session, the node is read and watched
 *   again. Only the time limit ends it (BarrierTimeoutError), or its signal. (Curator's wait throws
 *   a connection loss instead.) The barrier node is persistent: it outlives the session that set it.
 *
 * @example
 * ```ts
 * const barrier = new DistributedBarrier(client, '/jobs/nightly/barrier');
 * await barrier.setBarrier();                                // the coordinator
 * await barrier.waitOnBarrier({ timeoutMs: 60_000 });        // the workers: until removeBarrier()
 * ```
 */
export class DistributedBarrier {
  readonly client: ZkClient;
  readonly path: string;

  constructor(client: ZkClient, barrierPath: string) {
    this.client = validateClient(client, 'DistributedBarrier');
    this.path = validateRecipePath(this.client, barrierPath, 'barrier');
  }

  /** Sets the barrier: creates its node (and missing parents, as containers). Resolves too when it is already set. */
  async setBarrier(options?: { signal?: AbortSignal }): Promise<void> {
    const signal = validateSignal(validateOptions(options, 'options').signal);
    if (signal?.aborted) throw abortReason(signal);
    try {
      await this.client.create(this.path, { createParents: 'container', signal });
      log('%s: set', this.path);
    } catch (err) {
      if (!isZkError(err, 'NODEEXISTS')) throw err;
    }
  }

  /** Removes the barrier: deletes its node. Resolves too when there is none. */
  async removeBarrier(options?: { signal?: AbortSignal }): Promise<void> {
    const signal = validateSignal(validateOptions(options, 'options').signal);
    if (signal?.aborted) throw abortReason(signal);
    await this.client.delete(this.path, { quietly: true, signal });
    log('%s: removed', this.path);
  }

  /**
   * Waits until the barrier node does not exist. Rejects with BarrierTimeoutError when `timeoutMs`
   * passes first (Curator's `waitOnBarrier(maxWait)` returns false instead), and with
   * `signal.reason` on abort.
   */
  async waitOnBarrier(options?: BarrierWaitOptions): Promise<void> {
    await boundedWait(options, 'the wait on the barrier', this.path, (scope) => nodeBecomes(this.client, this.path, 'gone', scope.signal));
  }
}
