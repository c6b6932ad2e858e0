import debug from 'debug';
import { subscribe } from '../../src/util/events';
import type { ConnectionState } from '../../src/client/ConnectionState';
import type { Session } from '../../src/client/Session';
import type { ZkClient } from '../../src/client/ZkClient';
import { isSessionEndedError } from '../../src/retry';
import { IllegalStateError, InvalidArgumentError, isZkError } from '../../src/errors';
import { joinPath, nodeName, validatePath } from '../../src/paths';
import type { Stat, WatchEvent } from '../../src/transport/Transport';
import { abortReason } from '../../src/util/async';
import { validateFunction, validateOptions, validateSignal, validateString, validateTimeout } from '../../src/validate';
import { sortLockNodes } from '../locks/sequence';
import { LeaderLatchClosedError } from './errors';
import { LEADER_LATCH_NAME, RETRY_FIRST_MS, nextRetryDelay, readLeader, readParticipants, type Lifecycle, type Participant } from './participants';

const log = debug('zk-recipes:leader:latch');

/**
 * What `close()` tells the listeners of a leading latch: 'silent' (Curator's SILENT, the default)
 * says nothing; 'notifyLeader' (NOTIFY_LEADER) calls the `notLeader` listeners.
 */
export type LeaderLatchCloseMode = 'silent' | 'notifyLeader';

/** Options of a LeaderLatch. Defaults are in `LEADER_LATCH_DEFAULTS`. */
export interface LeaderLatchOptions {
  /** This participant's id, written as UTF-8 into its node: what `getLeader()` and `getParticipants()` report. */
  id?: string;
  /** Whether `close()` calls the `notLeader` listeners of a leading latch. */
  closeMode?: LeaderLatchCloseMode;
}

/** The defaults of LeaderLatchOptions, frozen. */
export const LEADER_LATCH_DEFAULTS = Object.freeze({
  id: '',
  closeMode: 'silent' as LeaderLatchCloseMode,
});

/** Options of `LeaderLatch.await`. */
export interface LeaderLatchAwaitOptions {
  /** Resolve false after this long; undefined waits as long as it takes. */
  timeoutMs?: number;
  /** Abort the wait: `await` rejects with `signal.reason`. */
  signal?: AbortSignal;
}

/** The events of a LeaderLatch: `isLeader` when it gains leadership, `notLeader` when it loses it. */
export type LeaderLatchEvent = 'isLeader' | 'notLeader';
export type LeaderLatchListener = () => void;


/**
 * Leader election where every participant stays in the race until it closes, wire-compatible with
 * Curator's LeaderLatch: each participant owns a protected EPHEMERAL_SEQUENTIAL node
 * `<path>/_c_<uuid>-latch-NNNNNNNNNN` whose data is its id (UTF-8), under container parents; the
 * lowest sequence leads. Java services running Curator's LeaderLatch can take part on the same path.
 *
 * - **One leader.** Each participant reads its own node once it has created it, and leads only
 *   with a node that belongs to the session that created it (CURATOR-696: a create's answer or a
 *   listing can name a node of another, or an expired, session); that read also watches the node,
 *   so its deletion by anyone (or of the whole latch path, CURATOR-724) is heard, and the latch
 *   stops leading and joins again with a new node. A participant leads when a listing made in its
 *   node's session shows its node first, while that session lasts; when the one node that was
 *   ahead of it goes, it leads without reading again (no node created later can sort before it).
 *   Waiting participants watch only the node just ahead of theirs (getData, never exists); when it
 *   goes they list again and keep their place (CURATOR-644/645), and they drop leadership before
 *   they start watching (CURATOR-653). A leader hears that its node was deleted only through its
 *   watch, so the next participant can lead a moment before the old leader stops: deleting a
 *   leader's node from outside is not a clean hand-over (as with Curator).
 * - **SUSPENDED.** Leadership is lost (`notLeader`) when the client's error policy is 'standard'
 *   (the default): it is given up before the server could expire the session and let another
 *   participant lead. Under the 'session' policy the leader keeps leading while suspended.
 * - **LOST.** Leadership is always lost. Once the client has a new session, the latch joins again
 *   with a new node (its old node went with the old session, or is deleted).
 * - **RECONNECTED** with the same session: the latch checks its place again (and takes leadership
 *   back if it was given up on SUSPENDED and it still sorts first).
 * - Starting before the client is connected is fine: the latch joins once it is.
 * - Listeners run synchronously; one that throws is logged and does not disturb the latch.
 *
 * @example
 * ```ts
 * await using latch = new LeaderLatch(client, '/services/billing/leader', { id: 'billing-1' });
 * latch.on('isLeader', () => scheduler.resume());
 * latch.on('notLeader', () => scheduler.pause());
 * latch.start();
 * if (await latch.await({ timeoutMs: 10_000 })) console.log('leading');
 * ```
 */
export class LeaderLatch implements AsyncDisposable {
  readonly path: string;
  readonly id: string;
  readonly closeMode: LeaderLatchCloseMode;
  private lifecycle: Lifecycle = 'LATENT';
  private leader = false;
  /** Our node (full path within the namespace) and the session that created it. */
  private node: string | undefined;
  private nodeSession: Session | undefined;
  private readonly listeners: Record<LeaderLatchEvent, Set<LeaderLatchListener>> = { isLeader: new Set(), notLeader: new Set() };
  private readonly leaderWaiters = new Set<(leader: boolean) => void>();
  private readonly closing = new AbortController();
  private stopStates: (() => void) | undefined;
  /** Nodes with a watch of ours outstanding in the current session: one is enough. */
  private readonly watching = new Set<string>();
  private dirty = false;
  /**
   * The one node ahead of ours at our last look, when there was exactly one; set to true once it
   * is deleted: then no node can sort ahead of ours (later nodes sort after it), and the listing
   * can be skipped.
   */
  private onlyAhead: string | undefined;
  private onlyAheadGone = false;
  private draining = false;
  private idle: Promise<void> = Promise.resolve();
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs = RETRY_FIRST_MS;
  private closed: Promise<void> | undefined;

  constructor(
    readonly client: ZkClient,
    path: string,
    options: LeaderLatchOptions = {},
  ) {
    this.path = validatePath(path);
    if (this.path === '/') throw new InvalidArgumentError('a latch path cannot be the root', { path });
    const o = validateOptions(options, 'options');
    this.id = o.id === undefined ? LEADER_LATCH_DEFAULTS.id : validateString(o.id, 'id', { allowEmpty: true });
    const closeMode = o.closeMode ?? LEADER_LATCH_DEFAULTS.closeMode;
    if (closeMode !== 'silent' && closeMode !== 'notifyLeader') {
      throw new InvalidArgumentError(`closeMode must be 'silent' or 'notifyLeader', got ${String(closeMode)}`);
    }
    this.closeMode = closeMode;
  }

  /**
   * Joins the election in the background and returns at once. The client must be started, not
   * necessarily connected. A latch starts once.
   */
  start(): void {
    if (this.lifecycle !== 'LATENT') throw new IllegalStateError(`a LeaderLatch starts once (it is ${this.lifecycle})`, { path: this.path });
    if (!this.client.isStarted) throw new IllegalStateError('the client is not started: call client.start() first', { path: this.path });
    this.lifecycle = 'STARTED';
    this.stopStates = subscribe(this.client, 'stateChanged', (state) => this.onState(state));
    this.kick();
  }

  /** Whether this latch leads now: started, not closed, and not given up on a connection problem. */
  get hasLeadership(): boolean {
    return this.lifecycle === 'STARTED' && this.leader;
  }

  /** Our node's path (within the client's namespace), if we have one now. Having one does not mean leading. */
  get ourPath(): string | undefined {
    return this.node;
  }

  /**
   * Waits until this latch leads. Resolves true once it does (at once if it does), false when
   * `timeoutMs` passes first, when the latch is not started, or when it closes. Rejects with
   * `signal.reason` on abort.
   */
  await(options: LeaderLatchAwaitOptions = {}): Promise<boolean> {
    const o = validateOptions(options, 'options');
    const timeoutMs = validateTimeout(o.timeoutMs, 'timeoutMs') ?? Infinity;
    const signal = validateSignal(o.signal);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.lifecycle !== 'STARTED') return Promise.resolve(false);
    if (this.leader) return Promise.resolve(true);
    return new Promise<boolean>((resolve, reject) => {
      const finish = (settle: () => void) => {
        this.leaderWaiters.delete(waiter);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        settle();
      };
      const waiter = (leader: boolean) => finish(() => resolve(leader));
      const onAbort = () => finish(() => reject(abortReason(signal as AbortSignal)));
      const timer = Number.isFinite(timeoutMs) ? setTimeout(() => finish(() => resolve(false)), timeoutMs) : undefined;
      signal?.addEventListener('abort', onAbort, { once: true });
      this.leaderWaiters.add(waiter);
    });
  }

  /** Calls `listener` on every `isLeader` or `notLeader`. Returns a function that removes it. */
  on(event: LeaderLatchEvent, listener: LeaderLatchListener): () => void {
    this.listenersOf(event).add(validateFunction(listener, 'listener'));
    return () => this.off(event, listener);
  }

  off(event: LeaderLatchEvent, listener: LeaderLatchListener): void {
    this.listenersOf(event).delete(listener);
  }

  /**
   * The participants in election order, read from the server now; the first leads. It may
   * disagree with `hasLeadership` for a moment: that one is this latch's own view.
   */
  async getParticipants(): Promise<Participant[]> {
    return readParticipants(this.client, await this.participantNodes());
  }

  /** The leader, read from the server now; `{ id: '', isLeader: false }` when nobody takes part. */
  async getLeader(): Promise<Participant> {
    return readLeader(this.client, await this.participantNodes());
  }

  /**
   * Leaves the election: leadership ends (the `notLeader` listeners hear of it under
   * 'notifyLeader'), pending `await`s resolve false, and our node is deleted. While connected,
   * close() resolves once the node is gone; while disconnected, the delete goes on in the
   * background (guaranteed: retried while the session lives). A node whose create was still in
   * flight is deleted by the client when the create lands. Idempotent.
   */
  close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ---------------------------------------------------------------- lifecycle

  private async shutdown(): Promise<void> {
    const wasLeader = this.hasLeadership;
    const started = this.lifecycle === 'STARTED';
    this.lifecycle = 'CLOSED';
    if (!started) return;
    this.stopStates?.();
    clearTimeout(this.retryTimer);
    this.closing.abort(new LeaderLatchClosedError({ path: this.path }));
    // Stop leading before the node goes: nobody else can lead until it has.
    this.leader = false;
    log('%s: closing (node %s, session 0x%s, %s)', this.path, this.node ?? '-', this.client.sessionId.toString(16), wasLeader ? 'was leader' : 'not leader');
    if (wasLeader && this.closeMode === 'notifyLeader') this.emit('notLeader');
    for (const wake of [...this.leaderWaiters]) wake(false);
    await this.idle;
    const node = this.node;
    this.node = undefined;
    if (node === undefined) return;
    // Connected, the delete is one round trip: wait for it. Disconnected, it is left to the
    // client's guaranteed delete, rather than holding close() for the whole retry budget.
    if (this.client.isConnected) await this.deleteNode(node);
    else void this.deleteNode(node);
  }

  private onState(state: ConnectionState): void {
    if (this.lifecycle !== 'STARTED') return;
    switch (state) {
      case 'SUSPENDED':
        if (this.client.isErrorState(state)) this.setLeadership(false);
        break;
      case 'LOST':
        this.setLeadership(false);
        this.kick();
        break;
      case 'CONNECTED':
      case 'RECONNECTED':
        this.kick();
        break;
      default:
        break;
    }
  }

  // ---------------------------------------------------------------- the election

  /**
   * Asks for the latch's place to be checked again. Steps run one at a time; kicks during a step
   * make one more step afterwards, so no change is missed and none is handled twice at once.
   */
  private kick(): void {
    if (this.lifecycle !== 'STARTED') return;
    this.dirty = true;
    if (this.retryTimer !== undefined) {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
    if (this.draining) return;
    this.draining = true;
    this.idle = this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (this.dirty && this.lifecycle === 'STARTED') {
        this.dirty = false;
        try {
          await this.step();
          this.retryDelayMs = RETRY_FIRST_MS;
        } catch (err) {
          if (this.lifecycle !== 'STARTED') break;
          this.retryLater(err);
          break;
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private retryLater(err: unknown): void {
    const delayMs = this.retryDelayMs;
    this.retryDelayMs = nextRetryDelay(delayMs);
    log('%s: step failed (node %s, session 0x%s), again in %d ms: %s', this.path, this.node ?? '-', this.client.sessionId.toString(16), delayMs, String(err));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.kick();
    }, delayMs);
    this.retryTimer.unref();
  }

  /**
   * One look at the election: make sure we have a node in this session, that it is ours and
   * watched, then decide.
   */
  private async step(): Promise<void> {
    // Nothing can be decided without a connection; the next CONNECTED or RECONNECTED kicks again.
    if (!this.client.isConnected) return;
    let children: readonly string[] | undefined;
    if (this.node === undefined || this.nodeSession === undefined || this.nodeSession !== this.client.session) children = await this.createNode();
    const node = this.node;
    if (node === undefined || this.lifecycle !== 'STARTED') return;
    // Once per node (and again only if its watch fires): it must belong to the session that
    // created it (CURATOR-696), and we watch it, so that its deletion by anyone is heard.
    if (!this.watching.has(node) && !(await this.verifyOwn(node))) return;
    if (children === undefined) {
      if (this.onlyAheadGone) {
        // The only node ahead of ours went, and no node created after ours sorts before it: first,
        // without a read. Our node still stands: its watch would have told us first.
        this.claim(node);
        return;
      }
      children = await this.listChildren(this.closing.signal, this.nodeSession);
    }
    await this.checkLeadership(node, children);
  }

  /** Gives up leadership and any node we had, and takes a new place at the end of the line. */
  private async createNode(): Promise<readonly string[]> {
    this.setLeadership(false);
    this.dropNode();
    const created = await this.client.createAndListParent(joinPath(this.path, LEADER_LATCH_NAME), {
      mode: 'EPHEMERAL_SEQUENTIAL',
      protected: true,
      createParents: 'container',
      data: this.id,
      signal: this.closing.signal,
    });
    this.node = created.path;
    this.nodeSession = created.session;
    log('%s: joined with %s (session %s)', this.path, created.path, created.session);
    return created.children;
  }

  /** Whether our node stands and belongs to its session; if not, it is dropped and we join again. */
  private async verifyOwn(node: string): Promise<boolean> {
    const stat = await this.readWatched(node);
    if (stat !== null && stat.ephemeralOwner === this.nodeSession?.id) return true;
    log('%s: %s is gone or belongs to session 0x%s, not ours (%s); joining again', this.path, node, (stat?.ephemeralOwner ?? 0n).toString(16), this.nodeSession);
    this.setLeadership(false);
    this.dropNode();
    this.dirty = true;
    return false;
  }

  /** Decides from a listing made in our node's session. */
  private async checkLeadership(node: string, children: readonly string[]): Promise<void> {
    const sorted = sortLockNodes(children, [LEADER_LATCH_NAME]);
    const at = sorted.indexOf(nodeName(node));
    if (at < 0) {
      // Our node is gone: someone deleted it, or the whole latch path (CURATOR-724), or it went
      // with its session. Join again.
      log('%s: our node %s is gone (session 0x%s); joining again', this.path, node, this.client.sessionId.toString(16));
      this.setLeadership(false);
      this.node = undefined;
      this.dirty = true;
      return;
    }
    this.onlyAhead = at === 1 ? joinPath(this.path, sorted[0]) : undefined;
    this.onlyAheadGone = false;
    if (at === 0) {
      this.claim(node);
      return;
    }
    // Not first: not leader, before anything else (CURATOR-653).
    this.setLeadership(false);
    const before = joinPath(this.path, sorted[at - 1]);
    // Gone already: list again and keep our place (CURATOR-644/645), rather than join again.
    if ((await this.readWatched(before)) === null) this.dirty = true;
  }

  /**
   * First in line: lead, unless something happened meanwhile (a state change, a watch, another
   * session): then the next step decides again.
   */
  private claim(node: string): void {
    this.onlyAhead = undefined;
    this.onlyAheadGone = false;
    if (this.dirty || !this.client.isConnected || this.lifecycle !== 'STARTED') return;
    if (this.client.session !== this.nodeSession || !this.client.isConnected || !this.watching.has(node)) {
      this.dirty = true;
      return;
    }
    this.setLeadership(true);
  }

  /**
   * Reads a node's stat and watches it (getData, not exists: exists on a missing node leaves a
   * watch that never fires). Null when the node is gone. A node already watched is not watched twice.
   */
  private async readWatched(node: string): Promise<Stat | null> {
    const fresh = !this.watching.has(node);
    if (fresh) this.watching.add(node);
    try {
      const { stat } = await this.client.getData(node, {
        watcher: fresh ? (event) => this.onWatch(node, event) : undefined,
        signal: this.closing.signal,
      });
      return stat;
    } catch (err) {
      if (fresh) this.watching.delete(node);
      if (isZkError(err, 'NONODE')) return null;
      throw err;
    }
  }

  private onWatch(node: string, event: WatchEvent): void {
    this.watching.delete(node);
    if (this.lifecycle !== 'STARTED') return;
    if (node === this.onlyAhead && event.type === 'deleted') this.onlyAheadGone = true;
    if (node === this.node && event.type === 'deleted') {
      log('%s: our node %s was deleted (session 0x%s)', this.path, node, this.client.sessionId.toString(16));
      this.setLeadership(false);
    }
    this.kick();
  }

  /**
   * The latch path's children; none when it is gone, or when `session` (our node's, for the
   * latch's own steps) has ended: our node went with it. `signal` is the latch's own for its
   * steps, none for queries.
   */
  private async listChildren(signal: AbortSignal | undefined, session?: Session): Promise<string[]> {
    try {
      return await this.client.getChildren(this.path, { signal, session });
    } catch (err) {
      if (isZkError(err, 'NONODE') || (session !== undefined && isSessionEndedError(err))) return [];
      throw err;
    }
  }


  private async participantNodes(): Promise<string[]> {
    const children = await this.listChildren(undefined);
    return sortLockNodes(children, [LEADER_LATCH_NAME]).map((c) => joinPath(this.path, c));
  }

  private dropNode(): void {
    const old = this.node;
    this.node = undefined;
    if (old !== undefined) void this.deleteNode(old);
  }

  /** Deletes a node of ours, guaranteed: a connection problem leaves the delete to the background. */
  private async deleteNode(node: string): Promise<void> {
    try {
      await this.client.delete(node, { guaranteed: true, quietly: true });
    } catch (err) {
      log('%s: deleting %s failed, left to the background: %s', this.path, node, String(err));
    }
  }

  // ---------------------------------------------------------------- leadership and listeners

  private setLeadership(leader: boolean): void {
    if (this.leader === leader) return;
    this.leader = leader;
    log('%s: %s (node %s, session 0x%s)', this.path, leader ? 'leader' : 'not leader', this.node ?? '-', this.client.sessionId.toString(16));
    if (leader) for (const wake of [...this.leaderWaiters]) wake(true);
    this.emit(leader ? 'isLeader' : 'notLeader');
  }

  private emit(event: LeaderLatchEvent): void {
    for (const listener of [...this.listeners[event]]) {
      try {
        listener();
      } catch (err) {
        log('%s: a %s listener threw: %O', this.path, event, err);
      }
    }
  }

  private listenersOf(event: LeaderLatchEvent): Set<LeaderLatchListener> {
    if (event !== 'isLeader' && event !== 'notLeader') throw new InvalidArgumentError(`unknown event ${String(event)}`);
    return this.listeners[event];
  }
}
