import { setMaxListeners } from 'node:events';
import { abortReason, type Deadline, now, startTimer, subscribe, type ZkClient } from '../../src/recipeKit';

/**
 * The time limits of one timed acquire, carried by one signal that every request of the call
 * listens to.
 *
 * The caller's deadline (`timeoutMs`) bounds waiting: behind other holders, and for a connection.
 * The attempt's own round trips are not waiting: on a live connection they may run on past the
 * deadline, up to `attemptTimeoutMs` from when they began (the call's start, or the end of its
 * last wait), and never past the deadline plus `attemptTimeoutMs`. So a free lock is won with any
 * timeout, 0 included, and a call still ends within `timeoutMs + attemptTimeoutMs` whatever the
 * network does. When the connection is not live at the deadline, or drops after it, the deadline
 * holds as it stands; a wait begun past it ends at once.
 */
export class AttemptScope {
  /**
   * What every request of the call carries: the caller's own signal (or none) when there is no
   * deadline, since then nothing but that signal can end the call; otherwise one of our own.
   */
  readonly signal: AbortSignal | undefined;
  private readonly controller: AbortController | undefined;
  /** Made when the time runs out, so that a call that ends in time builds no error. */
  private reason: Error | undefined;
  /** The latest end of the call: the deadline plus the attempt's bound. */
  private readonly limit: number;
  private waits = 0;
  /** Calls of inner recipes that keep their own limits (within ours): the semaphore's mutex. */
  private inner = 0;
  /** When the current run of round trips began. */
  private roundTripsSince = now();
  private cancelTimer: () => void = () => {};
  private stopStates: (() => void) | undefined;
  private readonly onOuterAbort: (() => void) | undefined;

  constructor(
    private readonly client: ZkClient,
    readonly deadline: Deadline,
    readonly attemptTimeoutMs: number,
    private readonly outer: AbortSignal | undefined,
  ) {
    this.limit = deadline.at + attemptTimeoutMs;
    if (!deadline.isFinite) {
      // No time limit to carry: no controller, no timer, no listener.
      this.signal = outer;
      return;
    }
    this.controller = new AbortController();
    this.signal = this.controller.signal;
    // Every request of the call listens to it.
    setMaxListeners(Infinity, this.signal);
    this.onOuterAbort = () => this.end(abortReason(outer as AbortSignal));
    // A signal aborted already ends the scope before it arms any timer.
    if (outer?.aborted) {
      this.onOuterAbort();
      return;
    }
    outer?.addEventListener('abort', this.onOuterAbort, { once: true });
    this.cancelTimer = startTimer(deadline.remainingMs, () => this.atDeadline());
  }

  /** Whether `err` is this scope's own timeout. */
  isTimeout(err: unknown): boolean {
    return this.reason !== undefined && err === this.reason;
  }

  /** The time left for an inner call's attempt: the attempt's bound, within the call's limit. */
  get attemptRemainingMs(): number {
    return Math.max(0, Math.min(this.attemptTimeoutMs, this.limit - now()));
  }

  /**
   * Runs a wait (behind a holder, for a connection): the deadline bounds it. Past the deadline it
   * does not begin: the signal aborts with the timeout, and so does the returned promise.
   */
  waiting<T>(wait: () => Promise<T>): Promise<T> {
    // With no deadline, a wait is only the caller's signal's to end: nothing to count.
    if (!this.deadline.isFinite) return this.signal?.aborted ? Promise.reject(abortReason(this.signal)) : wait();
    return this.timedWait(wait);
  }

  private async timedWait<T>(wait: () => Promise<T>): Promise<T> {
    if (this.deadline.expired) this.timeOut();
    if (this.signal?.aborted) throw abortReason(this.signal);
    this.waits++;
    try {
      return await wait();
    } finally {
      if (--this.waits === 0) this.roundTripsSince = now();
    }
  }

  /**
   * Runs the call of an inner recipe that keeps limits of its own, within ours (the semaphore's
   * internal mutex, given what is left of our deadline and attempt bound): our deadline does not
   * cut it short; our limit still does.
   */
  async within<T>(call: () => Promise<T>): Promise<T> {
    this.inner++;
    try {
      return await call();
    } finally {
      if (--this.inner === 0 && this.waits === 0) this.roundTripsSince = now();
    }
  }

  dispose(): void {
    this.cancelTimer();
    this.stopStates?.();
    if (this.onOuterAbort) this.outer?.removeEventListener('abort', this.onOuterAbort);
  }

  private atDeadline(): void {
    if (this.waits > 0 || !this.client.isConnected) {
      this.timeOut();
      return;
    }
    // Round trips under way on a live connection: they get their own bound.
    const endAt = this.inner > 0 ? this.limit : Math.min(this.roundTripsSince + this.attemptTimeoutMs, this.limit);
    this.cancelTimer = startTimer(endAt - now(), () => this.timeOut());
    // Waiting for a connection is waiting: a drop ends the grace.
    this.stopStates = subscribe(this.client, 'stateChanged', () => {
      if (!this.client.isConnected) this.timeOut();
    });
  }

  private timeOut(): void {
    if (this.controller && !this.controller.signal.aborted) this.end((this.reason ??= new Error('the time limit passed')));
  }

  private end(reason: unknown): void {
    this.cancelTimer();
    this.stopStates?.();
    this.controller?.abort(reason);
  }
}
