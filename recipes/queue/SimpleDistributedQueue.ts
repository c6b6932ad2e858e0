import debug from 'debug';
import type { ZkClient } from '../../src/client/ZkClient';
import { isZkError } from '../../src/errors';
import { joinPath, validatePath } from '../../src/paths';
import { abortReason } from '../../src/util/async';
import { toData, validateOptions, validateSignal, validateTimeout } from '../../src/validate';
import { NoSuchElementError } from './errors';
import { SIMPLE_QUEUE_ITEM_NAME } from './naming';

const log = debug('zk-recipes:queue:simple');

/** Options of `take()`. */
export interface TakeOptions {
  /** Give up after this long and resolve undefined. Default: wait as long as it takes. */
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
 * - **Waiting.** `take()` lists the children with a watch and waits only for that watch: nothing
 *   polls.
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
  readonly path: string;

  constructor(
    readonly client: ZkClient,
    path: string,
  ) {
    this.path = validatePath(path);
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
    return (await this.first(false, await this.list(undefined)))?.data;
  }

  /** The first item, without removing it. @throws NoSuchElementError when the queue is empty. */
  async element(): Promise<Buffer> {
    const data = await this.peek();
    if (data === undefined) throw new NoSuchElementError(`the queue at ${this.path} is empty`, { path: this.path });
    return data;
  }

  /** Removes and returns the first item; undefined when the queue is empty. */
  async poll(): Promise<Buffer | undefined> {
    return (await this.first(true, await this.list(undefined)))?.data;
  }

  /** Removes and returns the first item. @throws NoSuchElementError when the queue is empty. */
  async remove(): Promise<Buffer> {
    const data = await this.poll();
    if (data === undefined) throw new NoSuchElementError(`the queue at ${this.path} is empty`, { path: this.path });
    return data;
  }

  /**
   * Removes and returns the first item, waiting for one if the queue is empty. With `timeoutMs`,
   * resolves undefined when none came in time (Curator's `poll(timeout)`). An abort is honoured
   * while waiting; an item already being removed when it comes is still returned, not lost.
   */
  take(): Promise<Buffer>;
  take(options: TakeOptions): Promise<Buffer | undefined>;
  async take(options: TakeOptions = {}): Promise<Buffer | undefined> {
    const o = validateOptions(options, 'options');
    const timeoutMs = validateTimeout(o.timeoutMs, 'timeoutMs');
    const signal = validateSignal(o.signal);
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      let woken = false;
      let wake: () => void = () => undefined;
      const changed = new Promise<void>((resolve) => (wake = resolve));
      const watcher = () => {
        woken = true;
        wake();
      };
      const found = await this.first(true, await this.list(watcher));
      if (found) return found.data;
      if (woken) continue;
      if (!(await waitUntil(changed, deadline, signal))) return undefined;
    }
  }

  /**
   * The `qn-` children in order, with a watch when asked. A missing path lists as empty; the
   * watch is then an `exists` watch, which fires when the path is created again.
   */
  private async list(watcher: (() => void) | undefined): Promise<string[]> {
    try {
      const children = await this.client.getChildren(this.path, { watcher });
      return children.filter((c) => c.startsWith(SIMPLE_QUEUE_ITEM_NAME)).sort();
    } catch (err) {
      if (!isZkError(err, 'NONODE')) throw err;
    }
    if (watcher) {
      log('%s: the queue node is missing; watching for it to come back', this.path);
      // Created between the two calls: the watcher is not set, so list again at once.
      if ((await this.client.exists(this.path, { watcher })) !== null) watcher();
    }
    return [];
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

/** Resolves true when `changed` settles, false at the deadline; rejects on abort. */
function waitUntil(changed: Promise<void>, deadline: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  const remaining = deadline - Date.now();
  if (remaining <= 0) return Promise.resolve(false);
  return new Promise((resolve, reject) => {
    const timer = Number.isFinite(remaining) ? setTimeout(() => done(() => resolve(false)), remaining) : undefined;
    const onAbort = () => done(() => reject(abortReason(signal as AbortSignal)));
    const done = (settle: () => void) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      settle();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    void changed.then(() => done(() => resolve(true)));
  });
}
