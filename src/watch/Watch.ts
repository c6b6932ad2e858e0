import debug from 'debug';
import type { Session } from '../client/Session';
import type { ZkClient } from '../client/ZkClient';
import type { WatchKind } from '../client/OneShotWatches';
import { isZkError } from '../errors';
import { isSessionEndedError } from '../retry';
import type { WatchEvent, Watcher } from '../transport/Transport';
import { StepLoop } from '../util/StepLoop';

const log = debug('zk-recipes:watch');

/** Options of a NodeWatch or a ChildrenWatch. */
export interface NodeWatchOptions {
  /**
   * Watch in this session only: when it ends, the watch ends (`onEnd`), instead of following the
   * client into its next session. For watches whose meaning rests on an ephemeral node of it.
   */
  session?: Session;
  /** While the node is missing, watch for its creation. Default true; false: a missing node ends the watch. */
  creation?: boolean;
  /** Bounds the reads: an abort rejects `start()` with its reason, or (later) ends the watch. */
  signal?: AbortSignal;
  /**
   * Read only when asked (`read()`), not when the watch fires: `onStale` is told instead. For a
   * consumer that works through what it has before it looks again, so that a burst of changes
   * costs one read, not one each.
   */
  lazy?: boolean;
  /** With `lazy`: told when the watch fired (or could not be kept), so the value may be out of date. */
  onStale?: (event: WatchEvent) => void;
  /** Told of each error that made a read fail; the read is tried again after a back-off. Must not throw. */
  onError?: (err: unknown) => void;
  /**
   * Called once when the watch ends for a reason the listener was not told: its session ended, or
   * its signal aborted. (Without `creation`, a watch also ends when the node is missing or deleted:
   * `start()` resolves null, or the listener hears null.)
   */
  onEnd?: (reason: unknown) => void;
  /**
   * For a NodeWatch: whether its reads decompress the data (default: the client's
   * `enableCompression`). false reads the bytes as stored: for a watch that asks only whether a
   * node stands, on a node a peer (Curator, say) may not have compressed.
   */
  compressed?: boolean;
}

/** Called with the node's new value (null: the node is missing) and the event that told of it. */
export type WatchListener<T> = (value: T | null, event: WatchEvent | undefined) => void;

/** What a kind of watch reads, and when two readings are the same. */
export interface WatchReader<T> {
  readonly kind: WatchKind;
  read(
    client: ZkClient,
    path: string,
    options: { watcher: Watcher | undefined; session: Session | undefined; signal: AbortSignal | undefined; compressed: boolean | undefined },
  ): Promise<T>;
  same(a: T, b: T): boolean;
}

const MISSING = Symbol('missing');

/**
 * ZooKeeper's watching idiom, written once (kazoo's DataWatch is the model): read a node with a
 * one-shot watch; when the node is missing, watch for its creation instead (exists, which unlike
 * getData leaves a watch on a missing node), and read again when it turns up meanwhile; when the
 * watch fires, read again and watch anew; when the session ends or the native transport could not
 * keep the watch, read again (or end, for a watch pinned to a session).
 *
 * - One outstanding server watch per kind (data, children) at a time, so watches never pile up.
 * - A 'deleted' event is passed on at once, without a read: the event says it all.
 * - The listener hears each new value once; it runs inside a try.
 * - `close()` detaches the listener and, on the protocol transport, removes the watches from the
 *   server.
 */
export class Watch<T> {
  private readonly armed: Record<WatchKind, boolean> = { data: false, children: false };
  private readonly watchers: Record<WatchKind, Watcher>;
  /** Made on the first change: a cache holds tens of thousands of watches, most of which never fire. */
  private loopInstance: StepLoop | undefined;
  private readonly creation: boolean;
  private readonly session: Session | undefined;
  private last: T | null | undefined;
  private pendingEvent: WatchEvent | undefined;
  private ready = false;
  private ended = false;
  private started: Promise<T | null> | undefined;
  private readonly onSessionEnd: () => void;
  /** Forgets `onSessionEnd`, while the session is listened to. */
  private stopSessionEnd: (() => void) | undefined;

  /** @internal Built by NodeWatch and ChildrenWatch, whose readers it takes. */
  constructor(
    private readonly client: ZkClient,
    readonly path: string,
    private readonly reader: WatchReader<T>,
    private readonly listener: WatchListener<T>,
    private readonly options: NodeWatchOptions = {},
  ) {
    this.creation = options.creation ?? true;
    this.session = options.session;
    this.watchers = { data: (event) => this.onEvent('data', event), children: (event) => this.onEvent('children', event) };
    this.onSessionEnd = () => this.end(this.session?.endReason);
  }

  private get loop(): StepLoop {
    this.loopInstance ??= new StepLoop(() => this.step(), {
      onError: (err, retryInMs) => {
        if ((this.session !== undefined && isSessionEndedError(err)) || this.options.signal?.aborted) return this.end(err);
        log('%s: reading failed, again in %d ms: %s', this.path, retryInMs, String(err));
        this.options.onError?.(err);
      },
    });
    return this.loopInstance;
  }

  /** The last value read: undefined before `start()` has resolved, null while the node is missing. */
  get value(): T | null | undefined {
    return this.last;
  }

  /** Whether the watch has ended or was closed. */
  get isClosed(): boolean {
    return this.ended;
  }

  /**
   * Reads the node, watching it, and resolves with its value (null: missing). Later values go to
   * the listener. Rejects when the first read fails (the watch is then closed).
   */
  start(): Promise<T | null> {
    this.started ??= this.begin();
    return this.started;
  }

  /** Reads again now (the listener hears of a change). */
  refresh(): void {
    if (this.ready) this.loop.kick();
  }

  /** Reads now, watching anew if the watch fired, and resolves with the value (the listener hears of a change too). */
  async read(): Promise<T | null> {
    if (!this.ready) return this.start();
    const value = await this.readNode();
    if (!this.ended) this.deliver(value, undefined);
    return value;
  }

  /**
   * Stops listening, and leaves the server's watch to fire unheard: for a node about to be deleted
   * by us (its deletion ends the watch on the server), which a removal would only cost a request.
   */
  detach(): void {
    if (!this.ended) this.stop();
  }

  /** Stops watching: the listener is not called again, and the server watches are removed where the transport can. */
  async close(): Promise<void> {
    if (this.ended) return;
    this.stop();
    await Promise.all(
      (['data', 'children'] as const)
        .filter((kind) => this.armed[kind])
        .map((kind) => this.client.removeWatcher(this.path, this.watchers[kind], { kind }).catch(() => undefined)),
    );
  }

  private async begin(): Promise<T | null> {
    if (this.session) {
      if (this.session.isEnded) throw this.session.endReason;
      this.stopSessionEnd = this.session.onEnd(this.onSessionEnd);
    }
    try {
      this.last = await this.readNode();
    } catch (err) {
      this.stop();
      throw err;
    }
    this.ready = true;
    if (this.last === null && !this.creation) this.stop();
    // An event that came while the first read was under way: look again.
    else if (this.pendingEvent !== undefined) this.loop.kick();
    return this.last;
  }

  private onEvent(kind: WatchKind, event: WatchEvent): void {
    this.armed[kind] = false;
    if (this.ended) return;
    if (event.type === 'sessionLost' && this.session !== undefined) return this.end(this.session.endReason ?? event);
    if (this.options.lazy) {
      try {
        this.options.onStale?.(event);
      } catch (err) {
        log('%s: onStale threw: %O', this.path, err);
      }
      return;
    }
    if (event.type === 'deleted') {
      if (this.ready) {
        this.deliver(null, event);
        if (!this.creation) return this.stop();
      }
    } else if (event.type !== 'sessionLost' && event.type !== 'notWatching') {
      this.pendingEvent = event;
    }
    if (this.ready) this.loop.kick();
    else this.pendingEvent ??= event;
  }

  private async step(): Promise<void> {
    const value = await this.readNode();
    if (this.ended) return;
    const event = this.pendingEvent;
    this.pendingEvent = undefined;
    this.deliver(value, event);
    if (value === null && !this.creation) this.stop();
  }

  private deliver(value: T | null, event: WatchEvent | undefined): void {
    const last = this.last;
    if (last !== undefined && (last === null ? value === null : value !== null && this.reader.same(last, value))) return;
    this.last = value;
    try {
      this.listener(value, event);
    } catch (err) {
      log('%s: a watch listener threw: %O', this.path, err);
    }
  }

  private async readNode(): Promise<T | null> {
    const main = this.reader.kind;
    const { session } = this;
    const { signal, compressed } = this.options;
    const value = await this.armedRead(main, (watcher) => this.reader.read(this.client, this.path, { watcher, session, signal, compressed }));
    if (value !== MISSING) return value;
    if (!this.creation) return null;
    const stat = await this.armedRead('data', (watcher) => this.client.exists(this.path, { watcher, session, signal }));
    if (stat === MISSING || stat === null) return null;
    // Created between the two reads. A data watch is set on it now (exists on a node sets one).
    const again = await this.armedRead(main, (watcher) => this.reader.read(this.client, this.path, { watcher, session, signal, compressed }));
    return again === MISSING ? null : again;
  }

  /** A read with a watch of `kind` unless one is outstanding; MISSING for NONODE (no watch is then set). */
  private async armedRead<R>(kind: WatchKind, read: (watcher: Watcher | undefined) => Promise<R>): Promise<R | typeof MISSING> {
    const watch = !this.armed[kind];
    if (watch) this.armed[kind] = true;
    try {
      return await read(watch ? this.watchers[kind] : undefined);
    } catch (err) {
      if (watch) this.armed[kind] = false;
      if (isZkError(err, 'NONODE')) return MISSING;
      throw err;
    }
  }

  private end(reason: unknown): void {
    if (this.ended) return;
    this.stop();
    log('%s: watch ended: %s', this.path, reason instanceof Error ? reason.message : String(reason));
    try {
      this.options.onEnd?.(reason);
    } catch (err) {
      log('%s: onEnd threw: %O', this.path, err);
    }
  }

  private stop(): void {
    this.ended = true;
    this.loopInstance?.stop();
    this.stopSessionEnd?.();
    this.stopSessionEnd = undefined;
  }
}
