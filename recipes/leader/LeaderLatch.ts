import { EventEmitter, setMaxListeners } from 'node:events';
import debug from 'debug';
import {
  abortReason,
  ClientClosedError,
  type ConnectionState,
  Deadline,
  deleteOwnNode,
  emitSafely,
  IllegalStateError,
  InvalidArgumentError,
  isSessionEndedError,
  isZkError,
  joinPath,
  type NodeData,
  nodeName,
  NodeWatch,
  type Session,
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
import { sortLockNodes } from '../locks/sequence';
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
  /** Our node (full path within the namespace) and the session that created it. */
  private node: string | undefined;
  private nodeSession: Session | undefined;
  /** The watch on our own node: it proves the node ours (CURATOR-696) and hears its deletion. */
  private ownWatch: NodeWatch | undefined;
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
      log('%s: %s (node %s, session %s)', this.path, leading ? 'leader' : 'not leader', this.node ?? '-', this.nodeSession ?? '-');
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
    return this.node;
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
    log('%s: closing (node %s, session %s, %s)', this.path, this.node ?? '-', this.nodeSession ?? '-', wasLeader ? 'was leader' : 'not leader');
    if (wasLeader && (this.closeMode === 'notifyLeader' || cause !== undefined)) this.emitSafely('notLeader');
    this.leadership.wakeAll();
    await this.loop.idle;
    await this.closeWatches();
    const node = this.node;
    this.node = undefined;
    if (node === undefined || cause !== undefined) return;
    // Connected, the delete is one round trip: wait for it. Disconnected, it is left to the
    // client's guaranteed delete, rather than holding close() for the whole retry budget.
    if (this.client.isConnected) await deleteOwnNode(this.client, node);
    else void deleteOwnNode(this.client, node);
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
    if (session !== this.nodeSession || this.lifecycle !== 'STARTED' || session.closedByClient) return;
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
    if (this.node === undefined || this.nodeSession === undefined || this.nodeSession !== this.client.session) children = await this.createNode();
    const node = this.node;
    if (node === undefined || this.lifecycle !== 'STARTED') return;
    if (this.ownWatch === undefined && !(await this.watchOwn(node))) return;
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
    this.leadership.set(false);
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
    const session = created.session;
    session.signal.addEventListener('abort', () => this.onSessionEnd(session), { once: true });
    log('%s: joined with %s (session %s)', this.path, created.path, created.session);
    return created.children;
  }

  /**
   * Watches our own node, in its session. It must stand and belong to that session (CURATOR-696);
   * if not, it is dropped and we join again.
   */
  private async watchOwn(node: string): Promise<boolean> {
    const watch = new NodeWatch(this.client, node, (value) => this.onOwnNode(node, value), {
      session: this.nodeSession,
      creation: false,
      signal: this.closing.signal,
      onEnd: () => this.onOwnNode(node, null),
    });
    this.ownWatch = watch;
    const stat = (await watch.start().catch((err: unknown) => {
      this.ownWatch = undefined;
      throw err;
    }))?.stat;
    if (stat !== undefined && stat.ephemeralOwner === this.nodeSession?.id) return true;
    log('%s: %s is gone or belongs to session 0x%s, not ours (%s); joining again', this.path, node, (stat?.ephemeralOwner ?? 0n).toString(16), this.nodeSession);
    this.leadership.set(false);
    this.dropNode();
    this.loop.kick();
    return false;
  }

  private onOwnNode(node: string, value: NodeData | null): void {
    if (value !== null || node !== this.node || this.lifecycle !== 'STARTED') return;
    log('%s: our node %s is gone (session %s)', this.path, node, this.nodeSession);
    this.leadership.set(false);
    this.node = undefined;
    void this.closeWatches();
    this.loop.kick();
  }

  /** Decides from a listing made in our node's session. */
  private async checkLeadership(node: string, children: readonly string[]): Promise<void> {
    const sorted = sortLockNodes(children, [LEADER_LATCH_NAME]);
    const at = sorted.indexOf(nodeName(node));
    if (at < 0) {
      // Our node is gone: someone deleted it, or the whole latch path (CURATOR-724), or it went
      // with its session. Join again.
      log('%s: our node %s is gone (session %s); joining again', this.path, node, this.nodeSession);
      this.leadership.set(false);
      this.node = undefined;
      await this.closeWatches();
      this.loop.kick();
      return;
    }
    this.onlyAhead = at === 1 ? joinPath(this.path, sorted[0]) : undefined;
    this.onlyAheadGone = false;
    if (at === 0) {
      this.claim(node);
      return;
    }
    // Not first: not leader, before anything else (CURATOR-653).
    this.leadership.set(false);
    await this.watchAhead(joinPath(this.path, sorted[at - 1]));
  }

  /** Watches the node just ahead of ours; when it goes (or is gone already), look again and keep our place (CURATOR-644/645). */
  private async watchAhead(ahead: string): Promise<void> {
    if (this.aheadWatch?.path === ahead && !this.aheadWatch.isClosed) return;
    void this.aheadWatch?.close();
    const gone = () => {
      if (ahead === this.onlyAhead) this.onlyAheadGone = true;
      this.loop.kick();
    };
    const watch = new NodeWatch(this.client, ahead, (value) => value === null && gone(), {
      session: this.nodeSession,
      creation: false,
      signal: this.closing.signal,
      onEnd: () => this.loop.kick(),
    });
    this.aheadWatch = watch;
    if ((await watch.start()) === null) gone();
  }

  /**
   * First in line: lead, unless something happened meanwhile (a state change, a watch, another
   * session): then the next step decides again.
   */
  private claim(node: string): void {
    this.onlyAhead = undefined;
    this.onlyAheadGone = false;
    if (this.loop.pending || !this.client.isConnected || this.lifecycle !== 'STARTED') return;
    // This process stalled since it last heard (see isConnectionTrusted): look again, with a read
    // that only a live session answers, before leading.
    if (!this.client.isConnectionTrusted) {
      this.loop.kick();
      return;
    }
    if (this.client.session !== this.nodeSession || this.ownWatch === undefined || this.ownWatch.isClosed || node !== this.node) {
      this.loop.kick();
      return;
    }
    this.leadership.set(true);
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

  private async closeWatches(): Promise<void> {
    const watches = [this.ownWatch, this.aheadWatch];
    this.ownWatch = undefined;
    this.aheadWatch = undefined;
    await Promise.all(watches.map((w) => w?.close()));
  }

  private dropNode(): void {
    const old = this.node;
    this.node = undefined;
    void this.closeWatches();
    if (old !== undefined) void deleteOwnNode(this.client, old);
  }

  // ---------------------------------------------------------------- leadership and events

  private report(err: unknown, retryInMs: number): void {
    log('%s: step failed (node %s, session %s), again in %d ms: %s', this.path, this.node ?? '-', this.nodeSession ?? '-', retryInMs, String(err));
    if (this.listenerCount('error') > 0) this.emitSafely('error', err);
  }

  private emitSafely<E extends keyof LeaderLatchEvents>(event: E, ...args: LeaderLatchEvents[E]): void {
    emitSafely(this, event, args, (format, ...values) => log(`%s: ${format}`, this.path, ...values));
  }
}
