import debug from 'debug';
import {
  abortReason,
  ChildrenWatch,
  Deadline,
  deferred,
  isZkError,
  joinPath,
  TIMED_OUT,
  toData,
  validateClient,
  validateOptions,
  validateRecipePath,
  validateSignal,
  validateTimeout,
  waitFor,
  type ZkClient,
} from '../../src/recipeKit';
import { NoSuchElementError, QueueTimeoutError } from './errors';
import { SIMPLE_QUEUE_ITEM_NAME } from './naming';

const log = debug('zk-recipes:queue:simple');

/** Options of `take()`. */
export interface TakeOptions {
  /** Give up after this long with QueueTimeoutError. Default: wait as long as it takes. */
  timeoutMs?: number;
  /** Stops waiting: `take()` rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * The ZooKeeper queue recipe with Java's Queue methods, wire-compatible with Curator's
 * SimpleDistributedQueue: items are bytes in PERSISTENT_SEQUENTIAL `<path>/qn-NNNNNNNNNN` nodes.
 *
 * - **Order and guarantee.** Takers read the lowest `qn-` node and delete it; the one whose delete
 *   succeeds has it, the others move to the next. At most once: an item whose delete is answered
 *   by a connection loss is given to no one when the retried delete finds it gone (Curator's
 *   take behaves the same). Nodes that do not start with `qn-` are ignored.
 * - **The container.** `offer()` creates `path` and its missing parents as CONTAINER nodes, which
 *   the server deletes some time after they empty. A `take()` that finds the path gone waits with
 *   an `exists` watch for it to come back, instead of a children watch that cannot be set on a
 *   missing node: it does not hang when the container is reaped while it waits (CURATOR-308), and
 *   readers never write.
 * - **Waiting.** `take()` lists the children with a watch (a ChildrenWatch, which watches for the
 *   path's creation while it is missing) and waits only for that watch: nothing polls.
 * - **SUSPENDED.** Calls wait for the connection under the client's retry policy, and reject when
 *   it gives up; a waiting `take()` keeps waiting.
 * - **LOST.** The watch goes with the session; a waiting `take()` lists again on the new session.
 *
 * @example
 * ```ts
 * const queue = new SimpleDistributedQueue(client, '/mailbox');
 * await queue.offer('hello');
 * const bytes = await queue.take({ timeoutMs: 5_000 }); // Buffer, or undefined after 5 s
 * ```
 */
export class SimpleDistributedQueue {
  readonly client: ZkClient;
  readonly path: string;

  constructor(client: ZkClient, path: string) {
    this.client = validateClient(client, 'SimpleDistributedQueue');
    this.path = validateRecipePath(this.client, path, 'queue');
  }

  /** How many items the queue holds now (its `qn-` nodes); 0 when the path does not exist. */
  async size(): Promise<number> {
    return (await this.list()).length;
  }

  /**
   * Adds an item at the end. Resolves true (Java's Queue.offer), once the node exists.
   *
   * @throws InvalidArgumentError for data that is not bytes or a string, or over MAX_DATA_BYTES.
   */
  async offer(data: Buffer | Uint8Array | string): Promise<boolean> {
    const bytes = toData(data, 'the queue item');
    const created = await this.client.create(joinPath(this.path, SIMPLE_QUEUE_ITEM_NAME), {
      mode: 'PERSISTENT_SEQUENTIAL',
      createParents: 'container',
      data: bytes,
    });
    log('%s: offered %s', this.path, created);
    return true;
  }

  /** The first item, without removing it; undefined when the queue is empty. */
  async peek(): Promise<Buffer | undefined> {
    return (await this.first(false, await this.list()))?.data;
  }

  /** The first item, without removing it. @throws NoSuchElementError when the queue is empty. */
  async element(): Promise<Buffer> {
    const data = await this.peek();
    if (data === undefined) throw new NoSuchElementError(`the queue at ${this.path} is empty`, { path: this.path });
    return data;
  }

  /** Removes and returns the first item; undefined when the queue is empty. */
  async poll(): Promise<Buffer | undefined> {
    return (await this.first(true, await this.list()))?.data;
  }

  /** Removes and returns the first item. @throws NoSuchElementError when the queue is empty. */
  async remove(): Promise<Buffer> {
    const data = await this.poll();
    if (data === undefined) throw new NoSuchElementError(`the queue at ${this.path} is empty`, { path: this.path });
    return data;
  }

  /**
   * Removes and returns the first item, waiting for one if the queue is empty. With `timeoutMs`,
   * rejects with QueueTimeoutError when none came in time (Curator's `poll(timeout)` returns null;
   * every timed wait of zk-recipes rejects with a TimeoutError). An abort is honoured while
   * waiting; an item already being removed when it comes is still returned, not lost.
   */
  async take(options: TakeOptions = {}): Promise<Buffer> {
    const o = validateOptions(options, 'options');
    const timeoutMs = validateTimeout(o.timeoutMs, 'timeoutMs');
    const signal = validateSignal(o.signal);
    const deadline = Deadline.after(timeoutMs);
    let changed = deferred<void>();
    const watch = new ChildrenWatch(this.client, this.path, () => undefined, {
      lazy: true,
      signal,
      onStale: () => changed.resolve(),
    });
    try {
      for (;;) {
        if (signal?.aborted) throw abortReason(signal);
        changed = deferred<void>();
        const names = queueNames((await watch.read())?.children ?? []);
        const found = await this.first(true, names);
        if (found) return found.data;
        if ((await waitFor(changed.promise, { deadline, signal })) === TIMED_OUT) {
          throw new QueueTimeoutError(`no item in ${this.path} within ${timeoutMs} ms`, { path: this.path });
        }
      }
    } finally {
      // In the background: the removal's round trip must not hold the call past its deadline.
      void watch.close();
    }
  }

  /** The `qn-` children in order; none when the path does not exist. */
  private async list(): Promise<string[]> {
    try {
      return queueNames(await this.client.getChildren(this.path));
    } catch (err) {
      if (isZkError(err, 'NONODE')) return [];
      throw err;
    }
  }

  /** Reads (and with `remove`, deletes) the first node still there. */
  private async first(remove: boolean, names: readonly string[]): Promise<{ name: string; data: Buffer } | undefined> {
    for (const name of names) {
      const nodePath = joinPath(this.path, name);
      try {
        const { data } = await this.client.getData(nodePath);
        if (remove) await this.client.delete(nodePath);
        return { name, data };
      } catch (err) {
        // Another taker got it first: try the next.
        if (!isZkError(err, 'NONODE')) throw err;
      }
    }
    return undefined;
  }
}

/** The queue's item names in order: `qn-` nodes only, by sequence. */
function queueNames(children: readonly string[]): string[] {
  return children.filter((c) => c.startsWith(SIMPLE_QUEUE_ITEM_NAME)).sort();
}
