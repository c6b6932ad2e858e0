import debug from 'debug';
import type { Session } from '../client/Session';
import type { ZkClient } from '../client/ZkClient';
import { isZkError } from '../errors';
import { isSessionEndedError } from '../retry';
import type { Stat, WatchEvent, Watcher } from '../transport/Transport';
import { abortReason } from '../util/async';
import { StepLoop } from '../util/StepLoop';

const log = debug('zk-recipes:watch');

/** How a wait for a node's deletion ended: 'missing' when the first read found it gone already. */
export type DeletionOutcome = 'deleted' | 'missing';

/** What a waiter hears of the node it waits for. */
export interface DeletionListener {
  /** Each read that found the node, before the wait ends on a deletion the server made after it. */
  onRead?(data: Buffer, stat: Stat): void;
  /** A change of the node that is not its deletion, told before the wait reads the node again. */
  onChange?(): void;
  /**
   * The wait is ending with the node gone ('deleted', or 'missing' at the first read), told in the
   * handler that learnt it, before `done` settles: a waiter that reads next may send its read from
   * here, ahead of the microtasks between this handler and its `await`.
   */
  onGone?(outcome: DeletionOutcome): void;
}

/**
 * A wait for one node's deletion, in one session: what a waiter in a line does with the node just
 * ahead of it. The watching idiom is `Watch`'s (a NodeWatch with `creation: false`, pinned to a
 * session), cut to this one question, for the path that every contended acquisition takes:
 *
 * - one getData with a one-shot watch, sent now; NONODE is 'missing';
 * - a deletion event is 'deleted', with no read (with `onRead`, once the reads in flight have
 *   answered: one the server answered before the deletion carries what the node said last); any
 *   other event (a change of the node's data, or the native transport not keeping the watch) is
 *   told to `onChange`, then reads again with a new watch, and NONODE then is 'deleted'. A read
 *   that fails then is tried again after a back-off (StepLoop), as `Watch` does;
 * - the reads take the node's bytes as stored, never decompressed: what matters is whether the
 *   node stands, and a client with `enableCompression` waits behind a peer's node (Curator's, say)
 *   whose data is not compressed. Each read that finds the node is told to `onRead`, when given:
 *   a waiter learns from it what the node's holder has said (see the locks' hand-off mark);
 * - the session's end (heard through `Session.onEnd`) rejects `done` with the session's end reason,
 *   and the signal's abort with its reason;
 * - what the server still watches when the wait ends otherwise than by the node's deletion is
 *   removed from it, in the background (a dead connection would hold that request past any
 *   deadline).
 *
 * No object is kept after `done` settles, and nothing of a listing.
 */
export class DeletionWait {
  /** Settles once: with the outcome, or with the reason the wait ended. */
  readonly done: Promise<DeletionOutcome>;
  private resolveDone!: (outcome: DeletionOutcome) => void;
  private rejectDone!: (reason: unknown) => void;
  private readonly watcher: Watcher = (event) => this.onEvent(event);
  /** A server watch of ours is set, or a read that sets one is under way. */
  private armed = false;
  /** The first read has answered. */
  private ready = false;
  /** An event other than the deletion came before the first read answered. */
  private eventEarly = false;
  /** Reads sent and not yet answered. */
  private reading = 0;
  /** The deletion event came while a read was in flight (with `onRead`): the wait ends once it answers. */
  private deletedSeen = false;
  private over = false;
  /** Made on the first change that is not the deletion: most waits never see one. */
  private loop: StepLoop | undefined;
  /** Forgets our callback on the session's end, once one is set. */
  private stopSessionEnd: () => void = () => undefined;
  private readonly onAbort: (() => void) | undefined;

  /** Starts the wait: the first read is sent at once. */
  constructor(
    private readonly client: ZkClient,
    /**
     * The node's path, within the client's namespace: one a recipe built from a path the client
     * checked and a name the server gave, so its reads are not checked again (see
     * `ZkClient.getDataOfBuilt`).
     */
    readonly path: string,
    private readonly session: Session,
    private readonly signal: AbortSignal | undefined,
    /** Told of each read that found the node, and of each change but the deletion. */
    private readonly listener?: DeletionListener,
  ) {
    this.done = new Promise<DeletionOutcome>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    if (session.isEnded || signal?.aborted) {
      this.fail(session.isEnded ? session.endReason : abortReason(signal as AbortSignal));
      return;
    }
    this.stopSessionEnd = session.onEnd(() => this.fail(session.endReason));
    if (signal !== undefined) {
      this.onAbort = () => this.fail(abortReason(signal));
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
    this.armed = true;
    this.readNode(this.watcher).then(
      () => {
        this.ready = true;
        if (this.deletedSeen) this.end('deleted');
        else if (this.eventEarly) this.kick();
      },
      (err: unknown) => {
        this.armed = false;
        if (this.deletedSeen) this.end('deleted');
        else if (isZkError(err, 'NONODE')) this.end('missing');
        else this.fail(err);
      },
    );
  }

  private end(outcome: DeletionOutcome): void {
    if (this.over) return;
    this.finish();
    this.listener?.onGone?.(outcome);
    this.resolveDone(outcome);
  }

  /** Ends the wait now, rejecting `done` with `reason` (a waiter ends it so when its own node goes first). */
  fail(reason: unknown): void {
    if (this.over) return;
    this.finish();
    this.rejectDone(reason);
  }

  private onEvent(event: WatchEvent): void {
    this.armed = false;
    if (this.over) return;
    if (event.type === 'deleted') {
      // A read in flight may carry what the node said just before it went: hear it first.
      if (this.listener?.onRead !== undefined && this.reading > 0) this.deletedSeen = true;
      else this.end('deleted');
      return;
    }
    if (event.type === 'sessionLost') return this.fail(this.session.endReason ?? event);
    this.listener?.onChange?.();
    if (this.over) return;
    if (this.ready) this.kick();
    else this.eventEarly = true;
  }

  private kick(): void {
    this.loop ??= new StepLoop(() => this.read(), {
      onError: (err, retryInMs) => {
        if (isSessionEndedError(err) || this.signal?.aborted) return this.fail(err);
        log('%s: reading failed, again in %d ms: %s', this.path, retryInMs, String(err));
      },
    });
    this.loop.kick();
  }

  /** Reads the node again, watching it unless a watch of ours is still set: NONODE is its deletion. */
  private async read(): Promise<void> {
    if (this.over) return;
    const watch = !this.armed;
    if (watch) this.armed = true;
    try {
      await this.readNode(watch ? this.watcher : undefined);
    } catch (err) {
      if (watch) this.armed = false;
      if (!isZkError(err, 'NONODE') && !this.deletedSeen) throw err;
      this.end('deleted');
    }
    if (this.deletedSeen && this.reading === 0) this.end('deleted');
  }

  /** One read of the node, as stored, counted while in flight; what it found is told to `onRead`. */
  private async readNode(watcher: Watcher | undefined): Promise<void> {
    this.reading += 1;
    try {
      const read = await this.client.getDataOfBuilt(this.path, watcher, this.session, this.signal);
      if (!this.over) this.listener?.onRead?.(read.data, read.stat);
    } finally {
      this.reading -= 1;
    }
  }

  private finish(): void {
    this.over = true;
    this.stopSessionEnd();
    if (this.onAbort !== undefined) this.signal?.removeEventListener('abort', this.onAbort);
    this.loop?.stop();
    if (this.armed) {
      this.armed = false;
      this.client.removeWatcher(this.path, this.watcher, { kind: 'data' }).catch(() => undefined);
    }
  }
}
