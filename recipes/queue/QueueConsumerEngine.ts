import debug from 'debug';
import {
  ChildrenWatch,
  ClientClosedError,
  isRetryableError,
  metrics,
  nodeName,
  NodeWatch,
  type Session,
  startTimer,
  StepLoop,
  type ZkClient,
} from '../../src/recipeKit';
import { QueueItemLockLostError } from './errors';
import { QUEUE_ITEM_NAME, type QueueOrder } from './naming';
import { QueueItems, type ItemLock } from './QueueItems';
import { decodeNode, type QueueSerializer } from './serializers';

const log = debug('zk-recipes:queue:consumer');

/** What a lock-safe queue does with an item whose handler failed (Curator's ErrorMode). */
export type ErrorMode = 'requeue' | 'delete';

/** What a consumer knows about the item it is given. */
export interface QueueItemContext {
  /** The node the item came from, such as `queue-0000000012`. */
  readonly node: string;
  /** The item's place in its node: 0 unless the node was written by `putMulti`. */
  readonly index: number;
  /** How many items the node holds. */
  readonly count: number;
  /**
   * Lock-safe queues: aborts with QueueItemLockLostError when the session that holds the item's
   * lock ends, because another consumer may then be given the item. Never aborts otherwise.
   */
  readonly signal: AbortSignal;
}

/** A node claimed by a consumer: its items, handed to the sink. */
export interface ClaimedNode<T> {
  readonly name: string;
  readonly items: readonly T[];
  readonly signal: AbortSignal;
}

/**
 * What became of a claimed node: all its items were handled ('done'), one failed ('failed'), or the
 * consumer stopped before finishing it ('abandoned': a lock-safe queue leaves it for another consumer).
 */
export type NodeOutcome = 'done' | 'failed' | 'abandoned';

/** Hands a claimed node's items to their consumer; resolves with the outcome and never rejects. */
export type NodeSink<T> = (node: ClaimedNode<T>) => Promise<NodeOutcome>;

/** Everything the engine needs from its queue. */
export interface EngineSettings<T> {
  readonly client: ZkClient;
  readonly path: string;
  readonly lockPath: string | undefined;
  readonly order: QueueOrder;
  readonly serializer: QueueSerializer<T>;
  readonly errorMode: ErrorMode;
  readonly maxItems: number;
  /** Makes sure the queue node (and the lock node) exist; `force` after one was found missing. */
  ensurePaths(force: boolean): Promise<void>;
  /** Reports an error the engine handled (a failed handler, a corrupt node, a ZooKeeper error it retries). Never throws. */
  report(err: unknown, node: string | undefined): void;
  /** Called once when the engine starts closing. */
  onClosing?(): void;
}

interface InFlight {
  readonly name: string;
  readonly data: Buffer;
  /** How many items the node holds (0 when it could not be read). */
  readonly items: number;
  /** Lock-safe: our lock node, and the session it belongs to. */
  readonly lock: ItemLock | undefined;
  readonly controller: AbortController;
  done: Promise<void>;
}

/**
 * The consumer machinery every DistributedQueue variant shares; the variant only brings its
 * {@link QueueOrder}. One engine is one consumer with its own cursor:
 *
 * - A lazy ChildrenWatch keeps the queue's children: a change marks the listing stale, and the
 *   engine reads it again only once it has worked through what it has (or at once, for orders in
 *   which a new node can sort first), so a burst of puts costs one listing. It claims one node at a
 *   time, with at most `maxItems` nodes in its sink. A change in the children, a lock released by
 *   another consumer, a delay queue's due time or a free slot wakes it: nothing polls.
 * - Names already handled are remembered until they leave the children, so no node's data is read
 *   twice by one consumer (unless it is left in the queue for another try).
 * - Lock-safe (`lockPath`): claim = create EPHEMERAL `<lockPath>/<name>`, then read. A lock held by
 *   another consumer is watched with a NodeWatch; once it goes, the item is claimed again if it is
 *   still there. The item is deleted only after the sink finishes; then the lock node. Otherwise:
 *   read, delete with the read's version, then hand the items over.
 * - SUSPENDED changes nothing. When a session ends, the listing is read again in the next one, and
 *   the signals of the lock-safe items claimed in the old one abort.
 */
export class QueueConsumerEngine<T> {
  private readonly loop: StepLoop;
  private readonly closingController = new AbortController();
  private readonly items: QueueItems;
  private readonly children: ChildrenWatch;
  private running = false;
  private closing: Promise<void> | undefined;

  /** Sorted `queue-` names of the last listing. */
  private listing: string[] = [];
  /** Names before this index of `listing` were all skipped; a released lock resets it. */
  private pos = 0;
  /** The children may have changed since the last listing. */
  private stale = true;
  /** The cursor: names claimed, tried or lost to another consumer, until they leave the children. */
  private readonly handled = new Set<string>();
  /** Names whose lock another consumer holds, with the watch that waits for its deletion. */
  private readonly lockWaits = new Map<string, NodeWatch>();
  private readonly inFlight = new Map<string, InFlight>();
  private cancelDue: (() => void) | undefined;
  private dueAt = Infinity;

  constructor(
    private readonly s: EngineSettings<T>,
    private readonly sink: NodeSink<T>,
  ) {
    this.items = new QueueItems(s.client, s.path, s.lockPath);
    this.children = new ChildrenWatch(s.client, s.path, () => undefined, {
      lazy: true,
      // A listing under way when the consumer closes ends then, not when the connection is back.
      signal: this.closingController.signal,
      onStale: () => {
        this.stale = true;
        this.loop.kick();
      },
    });
    this.loop = new StepLoop(() => this.step(), {
      onError: (err, retryInMs) => {
        if (err instanceof ClientClosedError) {
          this.trace('the client closed; the consumer stops');
          this.running = false;
          this.loop.stop();
          return;
        }
        this.stale = true;
        // Connection problems are the client's to report (stateChanged); the others are news.
        if (!isRetryableError(err)) this.s.report(err, undefined);
        this.trace('%s; trying again in %d ms', (err as Error).message, retryInMs);
      },
    });
  }

  /** Nodes handed to the sink and not yet finished. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  start(): void {
    if (this.running || this.closing) return;
    this.running = true;
    this.loop.kick();
  }

  /** Stops claiming, waits for the nodes in the sink to be finished, and stops watching. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.running = false;
      this.closingController.abort(new ClientClosedError('the consumer is closing'));
      try {
        this.s.onClosing?.();
      } catch (err) {
        this.s.report(err, undefined);
      }
      this.loop.stop();
      await this.loop.idle;
      while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()].map((f) => f.done));
      this.cancelDue?.();
      await Promise.all([this.children.close(), ...[...this.lockWaits.values()].map((w) => w.close())]);
      this.trace('consumer closed');
    })();
    return this.closing;
  }

  /** Debug lines carry the queue path and the session. */
  private trace(format: string, ...args: unknown[]): void {
    log(`%s (session %s): ${format}`, this.s.path, this.s.client.session ?? '-', ...args);
  }

  // ---------------------------------------------------------------- the loop

  /** One action: list, or claim one node. Kicks itself again while there is more to do. */
  private async step(): Promise<void> {
    if (!this.running || this.inFlight.size >= this.s.maxItems) return;
    let next = this.pickNext();
    if (this.stale && (next === undefined || this.s.order.refreshOnChange)) {
      await this.relist();
      next = this.pickNext();
    }
    if (next === undefined || !this.running) return;
    if (this.s.lockPath === undefined) await this.claimAtMostOnce(next);
    else await this.claimLockSafe(next);
    this.loop.kick();
  }

  /** The next name to claim from the last listing, or undefined (arming the due timer of a delayed one). */
  private pickNext(): string | undefined {
    const now = Date.now();
    for (; this.pos < this.listing.length; this.pos++) {
      const name = this.listing[this.pos];
      if (this.handled.has(name) || this.lockWaits.has(name) || this.inFlight.has(name)) continue;
      const due = this.s.order.dueAt(name);
      if (due > now) {
        // The order sorts by due time: nothing after this one is due either.
        this.wakeAt(due);
        return undefined;
      }
      return name;
    }
    return undefined;
  }

  private wakeAt(dueAt: number): void {
    if (this.cancelDue !== undefined && this.dueAt <= dueAt) return;
    this.cancelDue?.();
    this.dueAt = dueAt;
    this.cancelDue = startTimer(dueAt - Date.now(), () => {
      this.cancelDue = undefined;
      this.loop.kick();
    });
  }

  private async relist(): Promise<void> {
    this.stale = false;
    // A missing queue node lists as empty; the watch then waits for its creation (a put re-creates it).
    const names = ((await this.children.read())?.children ?? []).filter((c) => c.startsWith(QUEUE_ITEM_NAME));
    const present = new Set(names);
    for (const name of this.handled) if (!present.has(name) && !this.inFlight.has(name)) this.handled.delete(name);
    for (const [name, watch] of this.lockWaits) {
      if (present.has(name)) continue;
      this.lockWaits.delete(name);
      void watch.close();
    }
    this.listing = this.s.order.sort(names);
    this.pos = 0;
    this.trace('listed %d items (%d handled, %d locked elsewhere, %d in flight)', names.length, this.handled.size, this.lockWaits.size, this.inFlight.size);
  }

  // ---------------------------------------------------------------- claiming

  /** Without a lock path: read, delete with the read's version, then hand over. At most once. */
  private async claimAtMostOnce(name: string): Promise<void> {
    this.handled.add(name);
    let data: Buffer | undefined;
    try {
      data = await this.items.takeAtMostOnce(name, this.closingController.signal);
    } catch (err) {
      // Unknown outcome: try again later (if our delete did happen, the item is gone: at most once).
      this.handled.delete(name);
      throw err;
    }
    // Undefined: another consumer got it first.
    if (data !== undefined) this.dispatch(name, data, undefined);
  }

  /** With a lock path: lock, read, hand over; the item is deleted once the sink is done. At least once. */
  private async claimLockSafe(name: string): Promise<void> {
    this.handled.add(name);
    let lock: ItemLock | 'exists' | 'noParent';
    try {
      lock = await this.items.lock(name, this.closingController.signal);
      if (lock === 'exists') lock = await this.waitForLock(name);
    } catch (err) {
      this.handled.delete(name);
      throw err;
    }
    if (lock === 'noParent') {
      this.handled.delete(name);
      await this.s.ensurePaths(true);
      return;
    }
    if (lock === 'exists') {
      // Another consumer's: we wait for its deletion, or it is gone already and we try again at once.
      this.handled.delete(name);
      return;
    }
    let data: Buffer | undefined;
    try {
      data = await this.items.read(name, this.closingController.signal);
    } catch (err) {
      await this.items.releaseLock(lock, this.closingController.signal);
      this.handled.delete(name);
      throw err;
    }
    if (data === undefined) {
      // Consumed and deleted by a consumer that took no lock, or just before we locked it.
      await this.items.releaseLock(lock, this.closingController.signal);
      return;
    }
    this.dispatch(name, data, lock);
  }

  /**
   * A lock node stands: ours (our create came through after a lost reply), or another consumer's,
   * whose deletion we then wait for. Resolves with our lock, or 'exists' when it is not ours.
   */
  private async waitForLock(name: string): Promise<ItemLock | 'exists'> {
    const watch = new NodeWatch(this.s.client, this.items.lockNode(name), (node) => node === null && this.onLockGone(name), {
      creation: false,
      compressed: false,
      signal: this.closingController.signal,
    });
    const node = await watch.start();
    const session = this.s.client.session;
    if (node !== null && session !== undefined && node.stat.ephemeralOwner === session.id) {
      void watch.close();
      return { node: this.items.lockNode(name), session };
    }
    if (node !== null) this.lockWaits.set(name, watch);
    return 'exists';
  }

  /** The lock we waited on is gone. If the item is still there, it is due again, before anything listed after it. */
  private onLockGone(name: string): void {
    if (!this.lockWaits.delete(name) || !this.running) return;
    this.trace('lock on %s released: looking at the item again', name);
    this.pos = 0;
    this.loop.kick();
  }

  // ---------------------------------------------------------------- handing over and finishing

  private dispatch(name: string, data: Buffer, lock: ItemLock | undefined): void {
    let items: T[];
    try {
      items = decodeNode(this.s.serializer, data);
    } catch (err) {
      // As Curator does with a corrupt node: report it and drop it, or every consumer would trip
      // on it again and again.
      this.s.report(err, name);
      const corrupt: InFlight = { name, data, items: 0, lock, controller: new AbortController(), done: Promise.resolve() };
      if (lock) this.track(corrupt, () => this.deleteThenRelease(name, lock));
      return;
    }
    const flight: InFlight = { name, data, items: items.length, lock, controller: new AbortController(), done: Promise.resolve() };
    if (metrics.queue.hasSubscribers) metrics.queue.publish({ path: this.s.path, event: 'delivered', node: name, items: items.length });
    this.track(flight, async () => {
      let outcome: NodeOutcome;
      try {
        outcome = await this.sink({ name, items, signal: flight.controller.signal });
      } catch (err) {
        this.s.report(err, name);
        outcome = 'failed';
      }
      await this.finish(flight, outcome);
    });
    if (lock) this.abortWithSession(flight, lock.session);
  }

  /** The item's signal aborts when the session that holds its lock ends: another consumer may get it. */
  private abortWithSession(flight: InFlight, session: Session): void {
    const onEnd = () => {
      this.trace('the session holding the lock on %s ended; another consumer may get it', flight.name);
      flight.controller.abort(
        new QueueItemLockLostError(`the session holding the lock on ${flight.name} ended: another consumer may be given the item`, {
          path: this.items.itemPath(flight.name),
          cause: session.endReason,
        }),
      );
    };
    if (session.isEnded) return onEnd();
    session.signal.addEventListener('abort', onEnd, { once: true });
    void flight.done.then(() => session.signal.removeEventListener('abort', onEnd));
  }

  private track(flight: InFlight, work: () => Promise<void>): void {
    this.inFlight.set(flight.name, flight);
    flight.done = work()
      .catch((err: unknown) => this.s.report(err, flight.name))
      .finally(() => {
        this.inFlight.delete(flight.name);
        this.loop.kick();
      });
  }

  private async finish(flight: InFlight, outcome: NodeOutcome): Promise<void> {
    const { lock, name } = flight;
    if (!lock) {
      // At most once: the node was deleted before the items were handed over.
      if (outcome === 'failed') this.trace('%s failed; without a lock path it is not requeued', name);
      return;
    }
    if (outcome === 'abandoned' || (outcome === 'failed' && this.s.errorMode === 'requeue' && lock.session.isEnded)) {
      // Left in the queue for the next claim, ours or another consumer's. After our session ended,
      // another consumer may already have it: a requeued copy would be a second one.
      this.trace('%s %s; left in the queue', name, outcome);
      this.leaveInQueue(name);
    } else if (outcome === 'failed' && this.s.errorMode === 'requeue') {
      try {
        const requeued = await this.items.requeue(name, this.s.order.requeuePrefix(name), flight.data, lock.session.signal);
        if (requeued !== undefined && metrics.queue.hasSubscribers) metrics.queue.publish({ path: this.s.path, event: 'requeued', node: nodeName(requeued), items: flight.items });
      } catch (err) {
        this.s.report(err, name);
        this.leaveInQueue(name);
      }
    } else {
      await this.deleteThenRelease(name, lock);
      return;
    }
    await this.items.releaseLock(lock);
  }

  /**
   * Deletes a handled item, across connection problems, until it is gone or the consumer closes
   * (then it is left to be delivered again: at least once); then releases its lock. After the
   * session ended it is deleted all the same: it was handled, and a consumer that took it meanwhile
   * finds it gone.
   */
  private async deleteThenRelease(name: string, lock: ItemLock): Promise<void> {
    try {
      if (await this.items.deleteItem(name, this.closingController.signal, lock)) return;
    } catch (err) {
      this.s.report(err, name);
      this.leaveInQueue(name);
    }
    await this.items.releaseLock(lock);
  }

  private leaveInQueue(name: string): void {
    this.handled.delete(name);
    this.pos = 0;
  }
}
