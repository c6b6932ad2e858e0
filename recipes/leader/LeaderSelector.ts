import { EventEmitter } from 'node:events';
import debug from 'debug';
import {
  abortReason,
  ClientClosedError,
  IllegalStateError,
  metrics,
  sleep,
  startClock,
  validateBoolean,
  validateClient,
  validateFunction,
  validateOptions,
  validateRecipePath,
  validateString,
  type ZkClient,
} from '../../src/recipeKit';
import { InterProcessMutex } from '../locks/InterProcessMutex';
import { LeadershipInterruptedError } from './errors';
import { LEADER_SELECTOR_NAME, RETRY_FIRST_MS, nextRetryDelay, readLeader, readParticipants, validateParticipantId, type Lifecycle, type Participant } from './participants';

const log = debug('zk-recipes:leader:selector');

/** The work a leader does. It leads until the returned promise settles; it must stop when `signal` aborts. */
export type TakeLeadership = (signal: AbortSignal) => Promise<void> | void;

/** Options of a LeaderSelector. Defaults are in `LEADER_SELECTOR_DEFAULTS`. */
export interface LeaderSelectorOptions {
  /** This participant's id, written as UTF-8 into its lock node ('' writes the client's `defaultData`, as Curator does). */
  id?: string;
  /** Join the line again each time a leadership ends (Curator's autoRequeue()). */
  autoRequeue?: boolean;
  /** Called when this participant becomes leader; leadership lasts until it settles. */
  takeLeadership: TakeLeadership;
}

/** The defaults of LeaderSelectorOptions, frozen. */
export const LEADER_SELECTOR_DEFAULTS = Object.freeze({ id: '', autoRequeue: false });


/**
 * Leader election where the leader leads for as long as its `takeLeadership` callback runs,
 * wire-compatible with Curator's LeaderSelector: it is an InterProcessMutex on `path` whose node
 * data is the participant's id (nodes `<path>/_c_<uuid>-lock-NNNNNNNNNN`), so it is fair (leaders
 * follow the order participants joined in) and Java services running Curator's LeaderSelector can
 * take part on the same path. Do not mix it with LeaderLatch on one path.
 *
 * - **Leadership.** Winning the mutex, the selector first checks that its lock node is still there
 *   and owned by the client's current session; only then does it call `takeLeadership(signal)`. A
 *   session LOST between winning and that check means `takeLeadership` is not called at all.
 *   Leadership ends, and the lock node is deleted, when the callback returns or throws (a throw is
 *   logged). With `autoRequeue` the selector then joins the line again.
 * - **The signal** aborts when the leadership can no longer be trusted: with the lease's
 *   LockLostError on SUSPENDED under the client's 'standard' error policy, on LOST under either
 *   policy, or when the lock node is deleted; with a LeadershipInterruptedError on
 *   `interruptLeadership()` or `close()`. `hasLeadership` turns false at once; the callback must
 *   stop its work and return, since the next leader may already be at work.
 * - **While waiting in line** connection problems are ridden out (a waiter whose session is lost
 *   joins again with a new node). An attempt that fails anyway (retries exhausted) ends this turn
 *   in the line; with `autoRequeue` the selector joins again once connected.
 *
 * @example
 * ```ts
 * const selector = new LeaderSelector(client, '/jobs/compaction/leader', {
 *   id: 'worker-7',
 *   autoRequeue: true,
 *   takeLeadership: async (signal) => {
 *     while (!signal.aborted) await compactNextSegment({ signal });
 *   },
 * });
 * selector.start();
 * // later
 * await selector.close();
 * ```
 */
/** The events of a LeaderSelector. */
export interface LeaderSelectorEvents {
  /** A turn in line failed (retries exhausted, a refused create): with autoRequeue the selector joins again after a back-off. Emitted only when someone listens. */
  error: [err: unknown];
}

export class LeaderSelector extends EventEmitter<LeaderSelectorEvents> implements AsyncDisposable {
  readonly client: ZkClient;
  readonly path: string;
  readonly id: string;
  readonly autoRequeue: boolean;
  private readonly takeLeadership: TakeLeadership;
  private readonly mutex: InterProcessMutex;
  private lifecycle: Lifecycle = 'LATENT';
  private queued = false;
  /** Set while `takeLeadership` runs; aborting it ends the leadership. */
  private leadership: AbortController | undefined;
  private readonly closing = new AbortController();
  private work: Promise<void> = Promise.resolve();
  private closed: Promise<void> | undefined;

  constructor(client: ZkClient, path: string, options: LeaderSelectorOptions) {
    super();
    this.client = validateClient(client, 'LeaderSelector');
    this.path = validateRecipePath(this.client, path, 'leader');
    const o = validateOptions(options, 'options');
    this.takeLeadership = validateFunction(o.takeLeadership as TakeLeadership, 'takeLeadership');
    this.id = o.id === undefined ? LEADER_SELECTOR_DEFAULTS.id : validateString(o.id, 'id', { allowEmpty: true });
    this.autoRequeue = o.autoRequeue === undefined ? LEADER_SELECTOR_DEFAULTS.autoRequeue : validateBoolean(o.autoRequeue, 'autoRequeue');
    validateParticipantId(this.client, this.path, LEADER_SELECTOR_NAME, this.id);
    // Curator writes the id only when there is one; otherwise the client's default data.
    this.mutex = new InterProcessMutex(this.client, this.path, { data: this.id === '' ? undefined : this.id, recipe: 'selector' });
  }

  /** Joins the line for leadership, in the background. A selector starts once. */
  start(): void {
    if (this.lifecycle !== 'LATENT') throw new IllegalStateError(`a LeaderSelector starts once (it is ${this.lifecycle})`, { path: this.path });
    if (!this.client.isStarted) throw new IllegalStateError('the client is not started: call client.start() first', { path: this.path });
    this.lifecycle = 'STARTED';
    this.enqueue();
  }

  /**
   * Joins the line again after a leadership ended (without `autoRequeue`). Returns false, doing
   * nothing, while this selector is already in line or leading; true when it joined.
   */
  requeue(): boolean {
    if (this.lifecycle !== 'STARTED') throw new IllegalStateError(`requeue() needs a started selector (it is ${this.lifecycle})`, { path: this.path });
    return this.enqueue();
  }

  /** Ends the current leadership, if this selector leads: the signal aborts with LeadershipInterruptedError('INTERRUPTED'). */
  interruptLeadership(): void {
    const leadership = this.leadership;
    if (leadership === undefined || leadership.signal.aborted) return;
    log('%s: leadership interrupted (id %s)', this.path, this.id);
    leadership.abort(new LeadershipInterruptedError('INTERRUPTED', { path: this.path }));
  }

  /** Whether `takeLeadership` runs now and its signal has not aborted. */
  get hasLeadership(): boolean {
    return this.leadership !== undefined && !this.leadership.signal.aborted;
  }

  /** The participants in line, read from the server now; the first leads. */
  async getParticipants(): Promise<Participant[]> {
    return readParticipants(this.client, await this.mutex.getParticipantNodes());
  }

  /** The leader, read from the server now; `{ id: '', isLeader: false }` when nobody is in line. */
  async getLeader(): Promise<Participant> {
    return readLeader(this.client, await this.mutex.getParticipantNodes());
  }

  /**
   * Leaves the line: a waiting attempt is abandoned (its node deleted), and a running
   * `takeLeadership` sees its signal abort with LeadershipInterruptedError('CLOSED'). Resolves once
   * the callback has returned and the lock node is deleted. Idempotent.
   */
  close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async shutdown(): Promise<void> {
    this.lifecycle = 'CLOSED';
    this.closing.abort(new LeadershipInterruptedError('CLOSED', { path: this.path }));
    await this.work;
  }

  private enqueue(): boolean {
    if (this.queued) return false;
    this.queued = true;
    this.work = this.runTurns();
    return true;
  }

  /** One turn in line, or turn after turn with autoRequeue. Never rejects. */
  private async runTurns(): Promise<void> {
    let retryDelayMs = RETRY_FIRST_MS;
    try {
      while (this.lifecycle === 'STARTED') {
        try {
          await this.mutex.runExclusive((leaseSignal) => this.lead(leaseSignal), { signal: this.closing.signal });
          retryDelayMs = RETRY_FIRST_MS;
        } catch (err) {
          if (this.lifecycle !== 'STARTED') return;
          log('%s: the attempt failed (id %s, session 0x%s): %s', this.path, this.id, this.client.sessionId.toString(16), String(err));
          if (this.listenerCount('error') > 0) this.emit('error', err);
          // A closed client ends the selector's turns for good.
          if (!this.autoRequeue || err instanceof ClientClosedError) return;
          await this.pause(retryDelayMs);
          retryDelayMs = nextRetryDelay(retryDelayMs);
          continue;
        }
        if (!this.autoRequeue) return;
      }
    } finally {
      this.queued = false;
    }
  }

  /** Runs `takeLeadership`, holding the mutex. */
  private async lead(leaseSignal: AbortSignal): Promise<void> {
    const node = this.mutex.getLockPath();
    if (node === undefined || !(await this.stillOurs(node, leaseSignal))) return;
    const leadership = new AbortController();
    const onLost = () => leadership.abort(abortReason(leaseSignal));
    const onClose = () => leadership.abort(abortReason(this.closing.signal));
    leaseSignal.addEventListener('abort', onLost, { once: true });
    this.closing.signal.addEventListener('abort', onClose, { once: true });
    this.leadership = leadership;
    log('%s: leading (id %s, node %s, session 0x%s)', this.path, this.id, node, this.client.sessionId.toString(16));
    const ledSince = startClock(metrics.leadership);
    if (ledSince > 0) metrics.leadership.publish({ recipe: 'selector', path: this.path, id: this.id, event: 'gained' });
    try {
      await this.takeLeadership(leadership.signal);
    } catch (err) {
      if (!(leadership.signal.aborted && err === leadership.signal.reason)) log('%s: takeLeadership threw (node %s): %O', this.path, node, err);
    } finally {
      if (metrics.leadership.hasSubscribers) {
        metrics.leadership.publish({ recipe: 'selector', path: this.path, id: this.id, event: 'lost', ledMs: ledSince > 0 ? performance.now() - ledSince : undefined });
      }
      this.leadership = undefined;
      leaseSignal.removeEventListener('abort', onLost);
      this.closing.signal.removeEventListener('abort', onClose);
      log('%s: leadership ended (id %s, node %s)', this.path, this.id, node);
    }
  }

  /**
   * Whether the node we won with is still ours: present, owned by the current session, and the
   * lease not lost. The mutex's view comes from reads that may predate a LOST; this read does not.
   */
  private async stillOurs(node: string, leaseSignal: AbortSignal): Promise<boolean> {
    if (leaseSignal.aborted || this.lifecycle !== 'STARTED') return false;
    const stat = await this.client.exists(node, { signal: this.closing.signal });
    const session = this.client.sessionId;
    if (stat === null || stat.ephemeralOwner !== session || leaseSignal.aborted || this.lifecycle !== 'STARTED') {
      log(
        '%s: won with %s but it is no longer ours (owner 0x%s, session 0x%s): not taking leadership',
        this.path,
        node,
        (stat?.ephemeralOwner ?? 0n).toString(16),
        session.toString(16),
      );
      return false;
    }
    return true;
  }

  /** Waits `ms` and for a connection, or until the selector closes. */
  private async pause(ms: number): Promise<void> {
    const signal = this.closing.signal;
    await sleep(ms, signal).catch(() => undefined);
    if (signal.aborted) return;
    await this.client.blockUntilConnected({ signal }).catch(() => undefined);
  }
}
