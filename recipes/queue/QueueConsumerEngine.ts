import debug from 'debug';
import { subscribe } from '../../src/util/events';
import type { ZkClient } from '../../src/client/ZkClient';
import { ClientClosedError, isZkError } from '../../src/errors';
import { joinPath } from '../../src/paths';
import { isRetryableError } from '../../src/retry';
import { QueueItemLockLostError } from './errors';
import { QUEUE_ITEM_NAME, type QueueOrder } from './naming';
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
   * lock is LOST, because another consumer may then be given the item. Never aborts otherwise.
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
  /** Lock-safe: our lock node, and the session and session epoch it was created in. */
  readonly lock: { readonly node: string; readonly sessionId: bigint; readonly epoch: number } | undefined;
  readonly controller: AbortController;
  done: Promise<void>;
}

const MAX_BACKOFF_MS = 5_000;
/** setTimeout's limit; a later due time just wakes once more on the way. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The consumer machinery every DistributedQueue variant shares; the variant only brings its
 * {@link QueueOrder}. One engine is one consumer with its own cursor:
 *
 * - It lists the queue's children with a one-shot watch and works through the new names in the
 *   variant's order, claiming one node at a time, with at most `maxItems` nodes in its sink. Only
 *   a change in the children (the watch), a reconnect, a lock released by another consumer, a delay
 *   queue's due time or a free slot wakes it: nothing polls.
 * - Names already handled are remembered until they leave the children, so no node's data is read
 *   twice by one consumer (unless it is left in the queue for another try).
 * - Lock-safe (`lockPath`): claim = create EPHEMERAL `<lockPath>/<name>`, then read. A lock held by
 *   another consumer is watched (getData: on a missing node, exists would leave a watch that never
 *   fires); once it goes, the item is claimed again if it is still there. The item is deleted only
 *   after the sink finishes; then the lock node. Otherwise: read, delete with the read's version,
 *   then hand the items over.
 * - SUSPENDED changes nothing. On RECONNECTED, and when the watch reports the session lost, the
 *   engine lists again, keeping its cursor. On LOST, in-flight lock-safe items' signals abort.
 */
export class QueueConsumerEngine<T> {
  private running = false;
  private closing: Promise<void> | undefined;
  private loopDone: Promise<void> = Promise.resolve();
  private stopStates: (() => void) | undefined;

  /** Sorted `queue-` names of the last listing. */
  private listing: string[] = [];
  /** Names before this index of `listing` were all skipped; a released lock resets it. */
  private pos = 0;
  /** The cursor: names claimed, tried or lost to another consumer, until they leave the children. */
  private readonly handled = new Set<string>();
  /** Names whose lock another consumer holds: we wait for its deletion. */
  private readonly lockWaits = new Set<string>();
  private readonly inFlight = new Map<string, InFlight>();

  /** The children may have changed since the last listing. */
  private stale = true;
  /** Our getChildren watch is set and has not fired. */
  private watchArmed = false;
  private poked = false;
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerDue = 0;
  /** Counts LOSTs: a lock created under an older epoch went with its session. */
  private epoch = 0;
  private backoffMs = 0;
  /** Waits that end when the engine starts closing. */
  private readonly closingWaiters = new Set<() => void>();

  constructor(
    private readonly s: EngineSettings<T>,
    private readonly sink: NodeSink<T>,
  ) {}

  /** Nodes handed to the sink and not yet finished. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  start(): void {
    if (this.running || this.closing) return;
    this.running = true;
    this.stopStates = subscribe(this.s.client, 'stateChanged', (state) => {
      if (state === 'LOST') this.onLost();
      if (state === 'CONNECTED' || state === 'RECONNECTED') {
        // Curator's ChildrenCache syncs on reconnect too: a change while we were away may have
        // been missed if the watch went with the session.
        this.stale = true;
        this.poke();
      }
    });
    this.loopDone = this.loop().catch((err: unknown) => {
      // Unreachable by design (the loop catches everything); never leave a rejection unhandled.
      this.s.report(err, undefined);
    });
  }

  /** Stops claiming, waits for the nodes in the sink to be finished, and stops listening. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.running = false;
      try {
        this.s.onClosing?.();
      } catch (err) {
        this.s.report(err, undefined);
      }
      this.poke();
      for (const done of this.closingWaiters) done();
      this.closingWaiters.clear();
      await this.loopDone;
      while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()].map((f) => f.done));
      this.stopStates?.();
      clearTimeout(this.timer);
      this.trace('consumer closed');
    })();
    return this.closing;
  }

  /** Debug lines carry the queue path and the session. */
  private trace(format: string, ...args: unknown[]): void {
    log(`%s (session 0x%s): ${format}`, this.s.path, this.s.client.sessionId.toString(16), ...args);
  }

  // ---------------------------------------------------------------- wake-ups

  private poke(): void {
    this.poked = true;
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Resolves at the next poke, or at once if one came since the last wait. */
  private async waitForWake(): Promise<void> {
    if (!this.poked) await new Promise<void>((resolve) => (this.wake = resolve));
    this.poked = false;
  }

  private armTimer(dueAt: number): void {
    if (this.timer !== undefined && this.timerDue <= dueAt) return;
    clearTimeout(this.timer);
    this.timerDue = dueAt;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.poke();
      },
      Math.min(Math.max(dueAt - Date.now(), 0), MAX_TIMER_MS),
    );
  }

  private onLost(): void {
    this.epoch++;
    for (const f of this.inFlight.values()) {
      if (f.lock && !f.controller.signal.aborted) {
        this.trace('session LOST while %s is in flight; another consumer may get it', f.name);
        f.controller.abort(
          new QueueItemLockLostError(`the session holding the lock on ${f.name} is LOST: another consumer may be given the item`, {
            path: joinPath(this.s.path, f.name),
          }),
        );
      }
    }
  }

  // ---------------------------------------------------------------- the loop

  private async loop(): Promise<void> {
    while (this.running) {
      try {
        if (this.inFlight.size >= this.s.maxItems) {
          await this.waitForWake();
          continue;
        }
        const next = this.pickNext();
        if (this.stale && (next === undefined || this.s.order.refreshOnChange)) {
          await this.relist();
          continue;
        }
        if (next === undefined) {
          await this.waitForWake();
          continue;
        }
        if (this.s.lockPath === undefined) await this.claimAtMostOnce(next);
        else await this.claimLockSafe(next, this.s.lockPath);
        this.backoffMs = 0;
      } catch (err) {
        if (!this.running) break;
        if (err instanceof ClientClosedError) {
          this.trace('the client closed; the consumer stops');
          this.running = false;
          break;
        }
        this.stale = true;
        // Connection problems are the client's to report (stateChanged); the others are news.
        if (!isRetryableError(err)) this.s.report(err, undefined);
        if (isRetryableError(err) && !this.s.client.isConnected) {
          this.trace('%s; waiting for a connection', (err as Error).message);
          // The stateChanged listener pokes on CONNECTED / RECONNECTED.
          while (this.running && !this.s.client.isConnected) await this.waitForWake();
        } else {
          this.backoffMs = Math.min(Math.max(this.backoffMs * 2, 100), MAX_BACKOFF_MS);
          this.trace('%s; trying again in %d ms', (err as Error).message, this.backoffMs);
          this.armTimer(Date.now() + this.backoffMs);
          await this.waitForWake();
        }
      }
    }
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
        this.armTimer(due);
        return undefined;
      }
      return name;
    }
    return undefined;
  }

  private async relist(): Promise<void> {
    const { client, path } = this.s;
    this.stale = false;
    const watcher = this.watchArmed
      ? undefined
      : () => {
          this.watchArmed = false;
          this.stale = true;
          this.poke();
        };
    if (watcher) this.watchArmed = true;
    let children: string[];
    try {
      children = await client.getChildren(path, { watcher });
    } catch (err) {
      if (watcher) this.watchArmed = false;
      if (!isZkError(err, 'NONODE')) {
        this.stale = true;
        throw err;
      }
      // The queue node is gone. A children watch cannot be set on a missing node; exists can
      // watch for its creation (a put re-creates it).
      const stat = await client.exists(path, {
        watcher: () => {
          this.stale = true;
          this.poke();
        },
      });
      if (stat !== null) this.stale = true;
      this.trace('the queue node is missing; waiting for it');
      children = [];
    }
    const names = children.filter((c) => c.startsWith(QUEUE_ITEM_NAME));
    if (names.length !== children.length) this.trace('%d foreign nodes ignored', children.length - names.length);
    const present = new Set(names);
    for (const name of this.handled) if (!present.has(name) && !this.inFlight.has(name)) this.handled.delete(name);
    for (const name of this.lockWaits) if (!present.has(name)) this.lockWaits.delete(name);
    this.listing = this.s.order.sort(names);
    this.pos = 0;
    this.trace('listed %d items (%d handled, %d locked elsewhere, %d in flight)', names.length, this.handled.size, this.lockWaits.size, this.inFlight.size);
  }

  // ---------------------------------------------------------------- claiming

  /** Without a lock path: read, delete with the read's version, then hand over. At most once. */
  private async claimAtMostOnce(name: string): Promise<void> {
    const { client } = this.s;
    const itemPath = joinPath(this.s.path, name);
    this.handled.add(name);
    let data: Buffer;
    try {
      const read = await client.getData(itemPath);
      data = read.data;
      await client.delete(itemPath, { version: read.stat.version });
    } catch (err) {
      // Another consumer got it first.
      if (isZkError(err, 'NONODE') || isZkError(err, 'BADVERSION')) return;
      // Unknown outcome: try again later (if our delete did happen, the item is gone: at most once).
      this.handled.delete(name);
      throw err;
    }
    this.dispatch(name, data, undefined);
  }

  /** With a lock path: lock, read, hand over; the item is deleted once the sink is done. At least once. */
  private async claimLockSafe(name: string, lockPath: string): Promise<void> {
    const { client } = this.s;
    const lockNode = joinPath(lockPath, name);
    const epoch = this.epoch;
    this.handled.add(name);
    try {
      await client.create(lockNode, { mode: 'EPHEMERAL' });
    } catch (err) {
      if (isZkError(err, 'NONODE')) {
        this.handled.delete(name);
        await this.s.ensurePaths(true);
        return;
      }
      if (!isZkError(err, 'NODEEXISTS')) {
        this.handled.delete(name);
        throw err;
      }
      const holder = await this.watchLock(name, lockNode).catch((e: unknown) => {
        this.handled.delete(name);
        throw e;
      });
      if (holder === 'other') {
        this.handled.delete(name);
        return;
      }
      if (holder === 'released') {
        // Gone between our create and our read: try again at once.
        this.handled.delete(name);
        return;
      }
      // Our own create, retried after a lost reply.
    }
    const sessionId = client.sessionId;
    let data: Buffer;
    try {
      data = (await client.getData(joinPath(this.s.path, name))).data;
    } catch (err) {
      await this.releaseLock({ node: lockNode, sessionId, epoch }, name);
      // Consumed and deleted by a consumer that took no lock, or just before we locked it.
      if (isZkError(err, 'NONODE')) return;
      this.handled.delete(name);
      throw err;
    }
    this.dispatch(name, data, { node: lockNode, sessionId, epoch });
  }

  /**
   * Another consumer's lock node exists: watch it with getData. Resolves 'other' (now waiting
   * for its deletion), 'released' (already gone) or 'ours' (our own create came through after all).
   */
  private async watchLock(name: string, lockNode: string): Promise<'other' | 'released' | 'ours'> {
    try {
      const { stat } = await this.s.client.getData(lockNode, { watcher: () => this.onLockGone(name) });
      if (stat.ephemeralOwner === this.s.client.sessionId && stat.ephemeralOwner !== 0n) return 'ours';
      this.lockWaits.add(name);
      return 'other';
    } catch (err) {
      if (isZkError(err, 'NONODE')) return 'released';
      throw err;
    }
  }

  /** The lock we waited on changed (normally: deleted). If the item is still there, it is ours to try. */
  private onLockGone(name: string): void {
    if (!this.lockWaits.has(name) || !this.running) return;
    this.s.client.exists(joinPath(this.s.path, name)).then(
      (stat) => {
        if (!this.lockWaits.delete(name)) return;
        if (stat === null) {
          this.handled.add(name);
        } else {
          // Its consumer died or gave it back: it is due again, before anything listed after it.
          this.trace('lock on %s released with the item still queued: claiming it again', name);
          this.pos = 0;
        }
        this.poke();
      },
      () => {
        // Let the claim sort it out.
        if (!this.lockWaits.delete(name)) return;
        this.pos = 0;
        this.poke();
      },
    );
  }

  // ---------------------------------------------------------------- handing over and finishing

  private dispatch(name: string, data: Buffer, lock: InFlight['lock']): void {
    let items: T[];
    try {
      items = decodeNode(this.s.serializer, data);
    } catch (err) {
      // As Curator does with a corrupt node: report it and drop it, or every consumer would trip
      // on it again and again.
      this.s.report(err, name);
      if (lock) {
        const flight: InFlight = { name, data, lock, controller: new AbortController(), done: Promise.resolve() };
        this.track(flight, async () => {
          await this.deleteItem(name);
          await this.releaseLock(lock, name);
        });
      }
      return;
    }
    const flight: InFlight = { name, data, lock, controller: new AbortController(), done: Promise.resolve() };
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
  }

  private track(flight: InFlight, work: () => Promise<void>): void {
    this.inFlight.set(flight.name, flight);
    flight.done = work()
      .catch((err: unknown) => this.s.report(err, flight.name))
      .finally(() => {
        this.inFlight.delete(flight.name);
        this.poke();
      });
  }

  private async finish(flight: InFlight, outcome: NodeOutcome): Promise<void> {
    const { lock, name } = flight;
    if (!lock) {
      // At most once: the node was deleted before the items were handed over.
      if (outcome === 'failed') this.trace('%s failed; without a lock path it is not requeued', name);
      return;
    }
    const sessionKept = lock.epoch === this.epoch;
    if (outcome === 'abandoned' || (outcome === 'failed' && this.s.errorMode === 'requeue' && !sessionKept)) {
      // Left in the queue for the next claim, ours or another consumer's. After a LOST, another
      // consumer may already have it: a requeued copy would be a second one.
      this.trace('%s %s; left in the queue', name, outcome);
      this.leaveInQueue(name);
    } else if (outcome === 'failed' && this.s.errorMode === 'requeue') {
      await this.requeue(flight);
    } else {
      await this.deleteItem(name);
    }
    await this.releaseLock(lock, name);
  }

  private leaveInQueue(name: string): void {
    this.handled.delete(name);
    this.pos = 0;
  }

  /**
   * Puts a failed item back as a new node at the end of its order: created first, then the old
   * one deleted, so a crash in between repeats the item rather than losing it. The new name is the
   * order's prefix, never the old name plus more (CURATOR-56).
   */
  private async requeue(flight: InFlight): Promise<void> {
    const prefix = this.s.order.requeuePrefix(flight.name);
    let created: string;
    try {
      created = await this.s.client.create(joinPath(this.s.path, prefix), { mode: 'PERSISTENT_SEQUENTIAL', data: flight.data });
    } catch (err) {
      this.s.report(err, flight.name);
      this.leaveInQueue(flight.name);
      return;
    }
    this.trace('%s requeued as %s', flight.name, created);
    await this.deleteItem(flight.name);
  }

  /**
   * Deletes a finished item, trying again across connection problems until it is gone or the
   * consumer closes (the item is then left to be delivered again: at least once). After a LOST
   * it is deleted all the same: it was handled, and a consumer that took it meanwhile finds it gone.
   */
  private async deleteItem(name: string): Promise<void> {
    const itemPath = joinPath(this.s.path, name);
    for (;;) {
      try {
        await this.s.client.delete(itemPath, { quietly: true });
        return;
      } catch (err) {
        if (!isRetryableError(err) || !this.running) {
          this.s.report(err, name);
          this.leaveInQueue(name);
          return;
        }
        this.trace('deleting %s: %s; trying again once connected', name, (err as Error).message);
        while (this.running && !this.s.client.isConnected) await this.nextStateChange();
      }
    }
  }

  /** Resolves at the next connection state change, or when the engine starts closing. */
  private nextStateChange(): Promise<void> {
    return new Promise((resolve) => {
      const stop = subscribe(this.s.client, 'stateChanged', () => {
        stop();
        this.closingWaiters.delete(done);
        resolve();
      });
      const done = () => {
        stop();
        resolve();
      };
      this.closingWaiters.add(done);
    });
  }

  /**
   * Deletes our lock node, if it is still ours: after a LOST it went with the session, and a node
   * at that path now belongs to another consumer. The owner check narrows the gap to one round trip.
   */
  private async releaseLock(lock: NonNullable<InFlight['lock']>, name: string): Promise<void> {
    if (lock.epoch !== this.epoch) return;
    try {
      const stat = await this.s.client.exists(lock.node);
      if (stat === null || stat.ephemeralOwner !== lock.sessionId) return;
      await this.s.client.delete(lock.node, { version: stat.version, quietly: true, guaranteed: true });
    } catch (err) {
      // A guaranteed delete goes on in the background while the session lasts; the node is
      // ephemeral, so it goes with the session at worst.
      this.trace('releasing the lock on %s: %s', name, (err as Error).message);
    }
  }
}
