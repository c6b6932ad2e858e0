import debug from 'debug';
import {
  abortReason,
  describeValue,
  IllegalStateError,
  InvalidArgumentError,
  isZkError,
  joinPath,
  MAX_DATA_BYTES,
  metrics,
  nodeName,
  validateClient,
  validateFunction,
  validateOptions,
  validatePath,
  validatePositiveInt,
  validateRecipePath,
  validateSignal,
  type ZkClient,
} from '../../src/recipeKit';
import { QueueConsumerEngine, type ErrorMode, type NodeSink, type QueueItemContext } from './QueueConsumerEngine';
import { QUEUE_ITEM_NAME, type QueueOrder } from './naming';
import { defaultSerializer, encodeNode, type QueueSerializer } from './serializers';

const log = debug('zk-recipes:queue');

/** Options of the DistributedQueue family. Defaults are in {@link QUEUE_DEFAULTS}. */
export interface QueueOptions<T> {
  /**
   * Turns items into node data and back. Default: Curator's ItemSerializer framing around JSON
   * items (`curatorItemSerializer(jsonSerializer())`), which a Java consumer with a JSON
   * QueueSerializer reads. For Java producers and consumers of strings, use
   * `curatorItemSerializer(utf8Serializer)`. A serializer without framing stores each item's bytes
   * as they are, one item per node (no `putMulti`).
   */
  serializer?: QueueSerializer<T>;
  /**
   * Lock-safe mode (at least once): a consumer creates EPHEMERAL `<lockPath>/<itemName>` before it
   * reads an item, and deletes the item only once the item is handled. Without it, consumption is
   * at most once. Use the same lock path as Curator consumers of the same queue.
   */
  lockPath?: string;
  /**
   * Lock-safe mode only: what happens to an item whose handler throws. 'requeue' (the default)
   * puts it back as a new node at the end of its order; 'delete' drops it.
   */
  errorMode?: ErrorMode;
  /**
   * How many nodes one consumer has in hand at a time: claimed and not yet finished. Default 1:
   * one item after the other, in order. With more, handlers run concurrently (started in order).
   * Unlike Curator's `QueueBuilder.maxItems`, which bounds the queue for producers, this bounds
   * what each consumer takes.
   */
  maxItems?: number;
  /**
   * Told about every error a consumer handled on its own: a handler that threw, a node that could
   * not be read, a ZooKeeper error it will retry after. Default: the debug log
   * (`zk-recipes:queue`). Must not throw (what it throws is logged and dropped).
   */
  onError?: (err: unknown, node: string | undefined) => void;
}

/** The defaults of {@link QueueOptions}. */
export const QUEUE_DEFAULTS = Object.freeze({
  errorMode: 'requeue' as ErrorMode,
  maxItems: 1,
});

/** Options of a put. */
export interface PutOptions {
  /** Aborts the put: it rejects with the signal's reason, and a node created after all is deleted. */
  signal?: AbortSignal;
}

/** Options of `consume()`. */
export interface ConsumeOptions {
  /** Ends the iteration: the pending `next()` rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Handles one item. A promise that resolves, or a plain return, means done; throwing or
 * rejecting means failed.
 */
export type QueueItemHandler<T> = (item: T, context: QueueItemContext) => unknown;

interface Delivery<T> {
  readonly item: T;
  readonly settle: (acked: boolean) => void;
}

/** Items handed from an engine to an iterator; once ended, whatever comes is given back at once. */
class Handoff<T> {
  private readonly queued: Delivery<T>[] = [];
  private taker: ((d: Delivery<T> | undefined) => void) | undefined;
  private ended = false;

  push(d: Delivery<T>): void {
    if (this.ended) return d.settle(false);
    const taker = this.taker;
    this.taker = undefined;
    if (taker) taker(d);
    else this.queued.push(d);
  }

  /** The next delivery; undefined once ended. Rejects with the signal's reason on abort. */
  take(signal: AbortSignal | undefined): Promise<Delivery<T> | undefined> {
    const first = this.queued.shift();
    if (first) return Promise.resolve(first);
    if (this.ended) return Promise.resolve(undefined);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.taker = undefined;
        reject(abortReason(signal as AbortSignal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.taker = (d) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(d);
      };
    });
  }

  /** Gives back what was not taken, and everything pushed from now on. */
  end(): void {
    this.ended = true;
    for (const d of this.queued.splice(0)) d.settle(false);
    const taker = this.taker;
    this.taker = undefined;
    taker?.(undefined);
  }
}

/**
 * What the DistributedQueue family shares: options, puts, and the two ways of consuming, on one
 * consumer engine ({@link QueueConsumerEngine}). A variant adds its own `put` and brings its
 * {@link QueueOrder}: how its nodes are named and in which order they are consumed.
 *
 * On SUSPENDED consumers keep their cursor and the items in hand; on RECONNECTED, and on a new
 * session after LOST, they list the children again. On LOST, a lock-safe item in hand may be
 * delivered again elsewhere, and its handler's `signal` aborts (see {@link DistributedQueue}).
 */
export abstract class QueueBase<T> implements AsyncDisposable {
  readonly path: string;
  readonly lockPath: string | undefined;
  readonly errorMode: ErrorMode;
  readonly maxItems: number;
  /** @internal */
  protected readonly serializer: QueueSerializer<T>;
  private readonly onError: ((err: unknown, node: string | undefined) => void) | undefined;
  private readonly engines = new Set<QueueConsumerEngine<T>>();
  private handlerStarted = false;
  private closed = false;
  private pathsReady: Promise<void> | undefined;

  readonly client: ZkClient;

  /** @internal Each queue's constructor brings its order. */
  protected constructor(
    client: ZkClient,
    path: string,
    options: QueueOptions<T> | undefined,
    /** @internal */
    protected readonly order: QueueOrder,
  ) {
    this.client = validateClient(client, 'a queue');
    this.path = validateRecipePath(this.client, path, 'queue');
    const o = validateOptions(options, 'options');
    this.lockPath = o.lockPath === undefined ? undefined : validatePath(o.lockPath, { what: 'lockPath' });
    if (this.lockPath !== undefined && (this.lockPath === this.path || this.path.startsWith(`${this.lockPath}/`))) {
      throw new InvalidArgumentError(`lockPath ${this.lockPath} must not be the queue path or above it`, { path: this.path });
    }
    if (o.errorMode !== undefined && o.errorMode !== 'requeue' && o.errorMode !== 'delete') {
      throw new InvalidArgumentError(`errorMode must be 'requeue' or 'delete', got ${describeValue(o.errorMode)}`);
    }
    if (o.errorMode !== undefined && this.lockPath === undefined) {
      // As in Curator (setErrorMode needs a lock path): without one the item is gone before it is handled.
      throw new InvalidArgumentError('errorMode applies to lock-safe queues only: set lockPath too');
    }
    this.errorMode = o.errorMode ?? QUEUE_DEFAULTS.errorMode;
    this.maxItems = o.maxItems === undefined ? QUEUE_DEFAULTS.maxItems : validatePositiveInt(o.maxItems, 'maxItems');
    const serializer = o.serializer ?? defaultSerializer<T>();
    if (serializer === null || typeof serializer !== 'object' || typeof serializer.serialize !== 'function' || typeof serializer.deserialize !== 'function') {
      throw new InvalidArgumentError(`serializer must be an object with serialize and deserialize, got ${describeValue(serializer)}`);
    }
    this.serializer = serializer;
    this.onError = o.onError === undefined ? undefined : validateFunction(o.onError, 'onError');
  }

  /**
   * Consumes with a handler, until `close()`: each item is passed to `handler`, in the queue's
   * order, at most `maxItems` nodes at a time. In a lock-safe queue, an item is deleted once its
   * handler resolves; if it throws, `errorMode` says whether the item is requeued or dropped.
   * Without `lockPath`, the item was deleted before the handler was called. A queue has one handler.
   *
   * @throws ZkError 'ILLEGAL_STATE' when a handler is already started or the queue is closed.
   */
  start(handler: QueueItemHandler<T>): void {
    validateFunction(handler, 'handler');
    this.assertOpen();
    if (this.handlerStarted) throw new IllegalStateError('this queue already has a handler', { path: this.path });
    this.handlerStarted = true;
    const sink: NodeSink<T> = async (node) => {
      for (let index = 0; index < node.items.length; index++) {
        try {
          await handler(node.items[index], { node: node.name, index, count: node.items.length, signal: node.signal });
        } catch (err) {
          this.report(err, node.name);
          return 'failed';
        }
      }
      return 'done';
    };
    const engine = this.newEngine(sink, undefined);
    engine.start();
  }

  /**
   * Consumes as an async iterator, in the queue's order. Each call is a consumer of its own.
   *
   * An item counts as handled when the loop asks for the next one. Leaving the loop (`break`,
   * `return`, a throw) or aborting while an item is in hand does not count: in a lock-safe queue
   * the item stays in the queue and is delivered again (iteration cannot tell a throw from a
   * `break`, so `errorMode` does not apply here); without `lockPath` it is gone. With `maxItems`
   * above 1, up to that many nodes are claimed ahead of the loop, and given back the same way.
   *
   * @example
   * ```ts
   * const ac = new AbortController();
   * for await (const job of queue.consume({ signal: ac.signal })) {
   *   await run(job); // deleted from the queue when the loop comes back for the next one
   * }
   * ```
   */
  consume(options: ConsumeOptions = {}): AsyncGenerator<T, void, undefined> {
    const signal = validateSignal(validateOptions(options, 'options').signal);
    this.assertOpen();
    return this.iterate(signal);
  }

  private async *iterate(signal: AbortSignal | undefined): AsyncGenerator<T, void, undefined> {
    const handoff = new Handoff<T>();
    const sink: NodeSink<T> = async (node) => {
      for (const item of node.items) {
        const acked = await new Promise<boolean>((settle) => handoff.push({ item, settle }));
        if (!acked) return 'abandoned';
      }
      return 'done';
    };
    if (signal?.aborted) throw abortReason(signal);
    this.assertOpen();
    const engine = this.newEngine(sink, () => handoff.end());
    engine.start();
    try {
      for (;;) {
        const delivery = await handoff.take(signal);
        if (delivery === undefined) return;
        let acked = false;
        try {
          yield delivery.item;
          acked = true;
        } finally {
          delivery.settle(acked);
        }
      }
    } finally {
      handoff.end();
      await engine.close();
      this.engines.delete(engine);
    }
  }

  /**
   * How many items wait in the queue now: its `queue-` nodes, those in hand with a consumer
   * included (a node written by `putMulti` counts once). 0 when the queue node does not exist.
   */
  async size(): Promise<number> {
    try {
      return (await this.client.getChildren(this.path)).filter((c) => c.startsWith(QUEUE_ITEM_NAME)).length;
    } catch (err) {
      if (isZkError(err, 'NONODE')) return 0;
      throw err;
    }
  }

  /**
   * Stops every consumer of this queue object: no new item is claimed, and the call resolves once
   * the items in hand are finished (handlers resolved; iterators back for their next item, which
   * ends their loop). Puts are refused afterwards. Idempotent.
   */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.engines].map((e) => e.close()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** @internal Creates one node holding `items`, named `<path>/<name><sequence>`. Resolves to its path. */
  protected async putNode(name: string, items: readonly T[], options: PutOptions | undefined): Promise<string> {
    const signal = validateSignal(validateOptions(options, 'options').signal);
    this.assertOpen();
    const data = encodeNode(this.serializer, items);
    if (data.length > MAX_DATA_BYTES) {
      throw new InvalidArgumentError(
        `the queue node would hold ${data.length} bytes, more than the limit of ${MAX_DATA_BYTES} bytes (ZooKeeper's 1 MiB packet less room for the request)`,
        { path: this.path },
      );
    }
    const nodePath = joinPath(this.path, name);
    for (let attempt = 0; ; attempt++) {
      await this.ensurePaths(attempt > 0, signal);
      try {
        const created = await this.client.create(nodePath, { mode: 'PERSISTENT_SEQUENTIAL', data, signal });
        log('%s: put %d item(s) as %s', this.path, items.length, created);
        if (metrics.queue.hasSubscribers) metrics.queue.publish({ path: this.path, event: 'put', node: nodeName(created), items: items.length });
        return created;
      } catch (err) {
        // The queue node was deleted since we made sure of it: make it again, once.
        if (!isZkError(err, 'NONODE') || attempt > 0) throw err;
      }
    }
  }

  /**
   * Makes sure the queue node (and the lock node) exist, as Curator's `start()` does: persistent
   * nodes, with any missing parents as containers. Once per queue object unless `force`.
   *
   * @internal
   */
  protected ensurePaths(force: boolean, signal?: AbortSignal): Promise<void> {
    if (force || this.pathsReady === undefined) {
      const ready = (async () => {
        for (const p of this.lockPath === undefined ? [this.path] : [this.path, this.lockPath]) {
          try {
            await this.client.create(p, { createParents: 'container', signal });
          } catch (err) {
            if (!isZkError(err, 'NODEEXISTS')) throw err;
          }
        }
      })();
      this.pathsReady = ready;
      ready.catch(() => {
        if (this.pathsReady === ready) this.pathsReady = undefined;
      });
    }
    return this.pathsReady as Promise<void>;
  }

  /** @internal */
  protected assertOpen(): void {
    if (this.closed) throw new IllegalStateError('the queue is closed', { path: this.path });
  }

  private newEngine(sink: NodeSink<T>, onClosing: (() => void) | undefined): QueueConsumerEngine<T> {
    const engine: QueueConsumerEngine<T> = new QueueConsumerEngine<T>(
      {
        client: this.client,
        path: this.path,
        lockPath: this.lockPath,
        order: this.order,
        serializer: this.serializer,
        errorMode: this.errorMode,
        maxItems: this.maxItems,
        ensurePaths: (force) => this.ensurePaths(force),
        report: (err, node) => this.report(err, node),
        onClosing: () => {
          onClosing?.();
        },
      },
      sink,
    );
    this.engines.add(engine);
    void this.ensurePaths(false).catch((err: unknown) => this.report(err, undefined));
    return engine;
  }

  private report(err: unknown, node: string | undefined): void {
    log('%s: %s%O', this.path, node === undefined ? '' : `${node}: `, err);
    if (!this.onError) return;
    try {
      this.onError(err, node);
    } catch (thrown) {
      log('%s: onError threw: %O', this.path, thrown);
    }
  }
}

export type { ErrorMode, QueueItemContext };
