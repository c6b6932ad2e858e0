import { EventEmitter, setMaxListeners } from 'node:events';
import debug from 'debug';
import {
  abortReason,
  ClientClosedError,
  type ConnectionState,
  Deadline,
  emitSafely,
  IllegalStateError,
  InvalidArgumentError,
  isSessionEndedError,
  joinPath,
  type NodeData,
  NodeWatch,
  raceAbort,
  type Session,
  type Stat,
  StepLoop,
  subscribe,
  validateClient,
  validateOptions,
  validateRecipePath,
  validateSignal,
  validateString,
  validateTimeout,
  type ZkClient,
} from '../../src/recipeKit';
import { Contender } from '../locks/Contender';
import { LeaderLatchClosedError, LeaderTimeoutError } from './errors';
import { LEADER_LATCH_DEFAULTS, type LeaderLatchAwaitOptions, type LeaderLatchCloseMode, type LeaderLatchEvents, type LeaderLatchOptions } from './latchOptions';
import { Leadership } from './Leadership';
import { LEADER_LATCH_NAME, RETRY_FIRST_MS, RETRY_MAX_MS, participantNodes, readLeader, readParticipants, validateParticipantId, type Lifecycle, type Participant } from './participants';

const log = debug('zk-recipes:leader:latch');

export { LEADER_LATCH_DEFAULTS, type LeaderLatchAwaitOptions, type LeaderLatchCloseMode, type LeaderLatchEvents, type LeaderLatchOptions };

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
 * - **SUSPENDED.** Leadership is lost (`notLeader`) under the client's 'standard' error policy (the
 *   default): it is given up before the server could expire the session and let another
 *   participant lead. Under the 'session' policy the leader keeps leading while suspended.
 * - **LOST.** Leadership is always lost. Once the client has a new session, the latch joins again
 *   with a new node. The client declares LOST before the server can expire the session.
 * - **The client closing** closes the latch: leadership ends (`notLeader` when it led) and pending
 *   `await`s reject with a LeaderLatchClosedError whose cause is the client's ClientClosedError.
 * - **RECONNECTED** with the same session: the latch checks its place again (and takes leadership
 *   back if it was given up on SUSPENDED and it still sorts first).
 * - Starting before the client is connected is fine: the latch joins once it is.
 * - It is an EventEmitter: `isLeader`, `notLeader`, and `error` for failed steps (tried again after
 *   a back-off); a listener that throws is logged and does not disturb the latch.
 *
 * @example
 * ```ts
 * await using latch = new LeaderLatch(client, '/services/billing/leader', { id: 'billing-1' });
 * latch.on('isLeader', () => scheduler.resume());
 * latch.on('notLeader', () => scheduler.pause());
 * latch.start();
 * await latch.await({ timeoutMs: 10_000 }); // LeaderTimeoutError if not leading by then
 * ```
 */
export class LeaderLatch extends EventEmitter<LeaderLatchEvents> implements AsyncDisposable {
  readonly client: ZkClient;
  readonly path: string;
  readonly id: string;
  readonly closeMode: LeaderLatchCloseMode;
  private lifecycle: Lifecycle = 'LATENT';
  private readonly leadership: Leadership;
  /**
   * Our place in the election: our node, pinned to the session that created it, and the watch on
   * it that proves it ours (CURATOR-696) and hears its deletion.
   */
  private contender: Contender | undefined;
  /** The watch on the node just ahead of ours. */
  private aheadWatch: NodeWatch | undefined;
  /**
   * The one node ahead of ours at our last look, when there was exactly one; `onlyAheadGone` once it
   * is deleted: then no node can sort ahead of ours (later nodes sort after it), and the listing
   * can be skipped.
   */
  private onlyAhead: string | undefined;
  private onlyAheadGone = false;
  private readonly loop: StepLoop;
  private readonly closing = new AbortController();
  private stopListening: (() => void) | undefined;
  private closed: Promise<void> | undefined;

  constructor(client: ZkClient, path: string, options: LeaderLatchOptions = {}) {
    super();
    this.client = validateClient(client, 'LeaderLatch');
    this.path = validateRecipePath(this.client, path, 'latch');
    const o = validateOptions(options, 'options');
    this.id = o.id === undefined ? LEADER_LATCH_DEFAULTS.id : validateString(o.id, 'id', { allowEmpty: true });
    validateParticipantId(this.client, this.path, LEADER_LATCH_NAME, this.id);
    const closeMode = o.closeMode ?? LEADER_LATCH_DEFAULTS.closeMode;
    if (closeMode !== 'silent' && closeMode !== 'notifyLeader') {
      throw new InvalidArgumentError(`closeMode must be 'silent' or 'notifyLeader', got ${String(closeMode)}`);
    }
    this.closeMode = closeMode;
    this.leadership = new Leadership({ recipe: 'latch', path: this.path, id: this.id }, (leading) => {
      log('%s: %s (node %s, session %s)', this.path, leading ? 'leader' : 'not leader', this.contender?.path ?? '-', this.contender?.session ?? '-');
      this.emitSafely(leading ? 'isLeader' : 'notLeader');
    });
    // Every request of the latch carries it.
    setMaxListeners(Infinity, this.closing.signal);
    this.loop = new StepLoop(() => this.step(), {
      firstRetryMs: RETRY_FIRST_MS,
      maxRetryMs: RETRY_MAX_MS,
      onError: (err, retryInMs) => this.report(err, retryInMs),
    });
  }

  /**
   * Joins the election in the background and returns at once. The client must be started, not
   * necessarily connected. A latch starts once.
   */
  start(): void {
    if (this.lifecycle !== 'LATENT') throw new IllegalStateError(`a LeaderLatch starts once (it is ${this.lifecycle})`, { path: this.path });
    if (!this.client.isStarted) throw new IllegalStateError('the client is not started: call client.start() first', { path: this.path });
    this.lifecycle = 'STARTED';
    const stopStates = subscribe(this.client, 'stateChanged', (state) => this.onState(state));
    const stopClosed = subscribe(this.client, 'closed', () => this.onClientClosed());
    this.stopListening = () => {
      stopStates();
      stopClosed();
    };
    this.loop.kick();
  }

  /** Whether this latch leads now: started, not closed, and not given up on a connection problem. */
  get hasLeadership(): boolean {
    return this.lifecycle === 'STARTED' && this.leadership.isLeading;
  }

  /** Our node's path (within the client's namespace), if we have one now. Having one does not mean leading. */
  get ourPath(): string | undefined {
    return this.contender?.path;
  }

  /**
   * Waits until this latch leads: resolves at once if it does. Rejects with LeaderTimeoutError when
   * `timeoutMs` passes first, with LeaderLatchClosedError when the latch is not started or closes,
   * and with `signal.reason` on abort.
   */
  async await(options: LeaderLatchAwaitOptions = {}): Promise<void> {
    const o = validateOptions(options, 'options');
    const timeoutMs = validateTimeout(o.timeoutMs, 'timeoutMs');
    const signal = validateSignal(o.signal);
    if (signal?.aborted) throw abortReason(signal);
    if (this.lifecycle !== 'STARTED') throw this.closedError();
    if (!(await this.leadership.until(Deadline.after(timeoutMs), signal))) {
      throw new LeaderTimeoutError(`the latch at ${this.path} did not lead within ${timeoutMs} ms`, { path: this.path });
    }
    if (!this.hasLeadership) throw this.closedError();
  }

  /**
   * The participants in election order, read from the server now; the first leads. It may
   * disagree with `hasLeadership` for a moment: that one is this latch's own view.
   */
  async getParticipants(): Promise<Participant[]> {
    return readParticipants(this.client, await participantNodes(this.client, this.path, LEADER_LATCH_NAME));
  }

  /** The leader, read from the server now; `{ id: '', isLeader: false }` when nobody takes part. */
  async getLeader(): Promise<Participant> {
    return readLeader(this.client, await participantNodes(this.client, this.path, LEADER_LATCH_NAME));
  }

  /**
   * Leaves the election: leadership ends (`notLeader` under 'notifyLeader'), pending `await`s
   * reject with LeaderLatchClosedError, and our node is deleted. While connected, close() resolves
   * once the node is gone; while disconnected, the delete goes on in the background (guaranteed:
   * retried while the session lives). A node whose create was still in flight is deleted by the
   * client when the create lands. Idempotent.
   */
  close(): Promise<void> {
    this.closed ??= this.shutdown(undefined);
    return this.closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ---------------------------------------------------------------- lifecycle

  private async shutdown(cause: unknown): Promise<void> {
    const wasLeader = this.hasLeadership;
    const started = this.lifecycle === 'STARTED';
    this.lifecycle = 'CLOSED';
    if (!started) return;
    this.stopListening?.();
    this.loop.stop();
    this.closing.abort(new LeaderLatchClosedError({ path: this.path, cause }));
    // Stop leading before the node goes: nobody else can lead until it has.
    this.leadership.endQuietly();
    log('%s: closing (node %s, session %s, %s)', this.path, this.contender?.path ?? '-', this.contender?.session ?? '-', wasLeader ? 'was leader' : 'not leader');
    if (wasLeader && (this.closeMode === 'notifyLeader' || cause !== undefined)) this.emitSafely('notLeader');
    this.leadership.wakeAll();
    await this.loop.idle;
    await this.closeWatches();
    const contender = this.contender;
    this.contender = undefined;
    if (contender === undefined || cause !== undefined) return;
    // Connected, the delete is one round trip: wait for it. Disconnected, it is left to the
    // client's guaranteed delete, rather than holding close() for the whole retry budget.
    if (this.client.isConnected) await contender.leave();
    else void contender.leave();
  }

  private closedError(): LeaderLatchClosedError {
    const reason = this.closing.signal.reason as LeaderLatchClosedError | undefined;
    return reason ?? new LeaderLatchClosedError({ path: this.path, state: this.lifecycle === 'LATENT' ? 'not started' : 'closed' });
  }

  private onState(state: ConnectionState): void {
    if (this.lifecycle !== 'STARTED') return;
    if (state === 'LOST' || (state === 'SUSPENDED' && this.client.isErrorState(state))) this.leadership.set(false);
    if (state !== 'SUSPENDED') this.loop.kick();
  }

  /** Our node's session ended: LOST, and the next session joins again (a client closing closes the latch: see onClientClosed). */
  private onSessionEnd(session: Session): void {
    if (session !== this.contender?.session || this.lifecycle !== 'STARTED' || session.closedByClient) return;
    this.leadership.set(false);
    this.loop.kick();
  }

  /** The client closed: so does the latch, with the client's reason, whether or not it had a node. */
  private onClientClosed(): void {
    if (this.lifecycle !== 'STARTED') return;
    this.leadership.set(false);
    void (this.closed ??= this.shutdown(new ClientClosedError('the client closed', { path: this.path })));
  }

  // ---------------------------------------------------------------- the election

  /**
   * One look at the election: make sure we have a node in this session, that it is ours and
   * watched, then decide.
   */
  private async step(): Promise<void> {
    // Nothing can be decided without a connection; the next CONNECTED or RECONNECTED kicks again.
    if (!this.client.isConnected || this.lifecycle !== 'STARTED') return;
    let children: readonly string[] | undefined;
    if (this.contender === undefined || this.contender.session !== this.client.session) children = await this.createNode();
    const contender = this.contender;
    if (contender === undefined || this.lifecycle !== 'STARTED') return;
    if (contender.own === undefined && !(await this.watchOwn(contender))) return;
    if (children === undefined) {
      if (this.onlyAheadGone) {
        // The only node ahead of ours went, and no node created after ours sorts before it: first,
        // without a read. Our node still stands: its watch would have told us first.
        this.claim(contender);
        return;
      }
      children = await this.listChildren(contender);
    }
    await this.checkLeadership(contender, children);
  }

  /** Gives up leadership and any node we had, and takes a new place at the end of the line. */
  private async createNode(): Promise<readonly string[]> {
    this.leadership.set(false);
    this.dropNode();
    const { contender, listing } = await Contender.join(this.client, this.path, joinPath(this.path, LEADER_LATCH_NAME), {
      mode: 'EPHEMERAL_SEQUENTIAL',
      data: this.id,
      signal: this.closing.signal,
    });
    this.contender = contender;
    const session = contender.session;
    session.signal.addEventListener('abort', () => this.onSessionEnd(session), { once: true });
    log('%s: joined with %s (session %s)', this.path, contender.path, session);
    return listing.children;
  }

  /**
   * Watches our own node, in its session. It must stand and belong to that session (CURATOR-696);
   * if not, it is dropped and we join again.
   */
  private async watchOwn(contender: Contender): Promise<boolean> {
    const own = contender.watchOwn();
    own.listen((value) => this.onOwnNode(contender, value));
    let stat: Stat | undefined;
    try {
      stat = (await raceAbort(own.watch.start(), this.closing.signal))?.stat;
    } catch (err) {
      // Set again at the next step.
      contender.dropOwnWatch();
      throw err;
    }
    if (contender.isOurs(stat)) return true;
    log('%s: %s is gone or belongs to session 0x%s, not ours (%s); joining again', this.path, contender.path, (stat?.ephemeralOwner ?? 0n).toString(16), contender.session);
    this.leadership.set(false);
    this.dropNode();
    this.loop.kick();
    return false;
  }

  private onOwnNode(contender: Contender, value: NodeData | null): void {
    if (value !== null || contender !== this.contender || this.lifecycle !== 'STARTED') return;
    log('%s: our node %s is gone (session %s)', this.path, contender.path, contender.session);
    this.leadership.set(false);
    this.contender = undefined;
    void this.closeWatches(contender);
    this.loop.kick();
  }

  /** Decides from a listing made in our node's session. */
  private async checkLeadership(contender: Contender, children: readonly string[]): Promise<void> {
    const before = contender.placeIn(children, [LEADER_LATCH_NAME]);
    if (before === undefined) {
      // Our node is gone: someone deleted it, or the whole latch path (CURATOR-724), or it went
      // with its session. Join again.
      log('%s: our node %s is gone (session %s); joining again', this.path, contender.path, contender.session);
      this.leadership.set(false);
      this.contender = undefined;
      await this.closeWatches(contender);
      this.loop.kick();
      return;
    }
    this.onlyAhead = before.length === 1 ? before[0] : undefined;
    this.onlyAheadGone = false;
    if (before.length === 0) {
      this.claim(contender);
      return;
    }
    // Not first: not leader, before anything else (CURATOR-653).
    this.leadership.set(false);
    await this.watchAhead(contender, before[before.length - 1]);
  }

  /** Watches the node just ahead of ours; when it goes (or is gone already), look again and keep our place (CURATOR-644/645). */
  private async watchAhead(contender: Contender, ahead: string): Promise<void> {
    if (this.aheadWatch?.path === joinPath(this.path, ahead) && !this.aheadWatch.isClosed) return;
    void this.aheadWatch?.close();
    const gone = () => {
      if (ahead === this.onlyAhead) this.onlyAheadGone = true;
      this.loop.kick();
    };
    const watch = contender.watchAhead(ahead, gone, () => this.loop.kick(), this.closing.signal);
    this.aheadWatch = watch;
    if ((await watch.start()) === null) gone();
  }

  /**
   * First in line: lead, unless something happened meanwhile (a state change, a watch, another
   * session): then the next step decides again.
   */
  private claim(contender: Contender): void {
    this.onlyAhead = undefined;
    this.onlyAheadGone = false;
    if (this.loop.pending || !this.client.isConnected || this.lifecycle !== 'STARTED') return;
    // This process stalled since it last heard (see isConnectionTrusted): look again, with a read
    // that only a live session answers, before leading.
    if (!contender.mayClaimOnEvents) {
      this.loop.kick();
      return;
    }
    if (contender !== this.contender || this.client.session !== contender.session || contender.own === undefined || contender.ownGone) {
      this.loop.kick();
      return;
    }
    this.leadership.set(true);
  }

  /** The latch path's children, listed in our node's session; none when our session has ended (our node went with it). */
  private async listChildren(contender: Contender): Promise<readonly string[]> {
    try {
      return (await contender.list(this.closing.signal)).children;
    } catch (err) {
      if (isSessionEndedError(err)) return [];
      throw err;
    }
  }

  /** Stops watching our node (when given) and the node ahead. */
  private async closeWatches(contender = this.contender): Promise<void> {
    const ahead = this.aheadWatch;
    this.aheadWatch = undefined;
    contender?.dropOwnWatch();
    await ahead?.close();
  }

  private dropNode(): void {
    const old = this.contender;
    this.contender = undefined;
    void this.closeWatches(old);
    void old?.leave();
  }

  // ---------------------------------------------------------------- leadership and events

  private report(err: unknown, retryInMs: number): void {
    log('%s: step failed (node %s, session %s), again in %d ms: %s', this.path, this.contender?.path ?? '-', this.contender?.session ?? '-', retryInMs, String(err));
    if (this.listenerCount('error') > 0) this.emitSafely('error', err);
  }

  private emitSafely<E extends keyof LeaderLatchEvents>(event: E, ...args: LeaderLatchEvents[E]): void {
    emitSafely(this, event, args, (format, ...values) => log(`%s: ${format}`, this.path, ...values));
  }
}
