/**
 * Deadlines, and waits raced against a deadline and an AbortSignal: the one place where zk-recipes
 * makes a time limit hold. A timeout is honoured however large it is: Number.MAX_SAFE_INTEGER (or
 * Infinity) means, in effect, no limit.
 */
import { setMaxListeners } from 'node:events';
import { abortReason } from './async';
import { now, startTimer } from './timers';

/** What `waitFor` resolves to when the deadline passed first. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/** A point on the monotonic clock by which a wait must end; `Deadline.NONE` never comes. */
export class Deadline {
  static readonly NONE = new Deadline(Infinity);

  private constructor(readonly at: number) {}

  /** The deadline `timeoutMs` from now; NONE for undefined. */
  static after(timeoutMs: number | undefined): Deadline {
    return timeoutMs === undefined || timeoutMs === Infinity ? Deadline.NONE : new Deadline(now() + timeoutMs);
  }

  get isFinite(): boolean {
    return this.at !== Infinity;
  }

  /** Milliseconds left, never below 0; Infinity for NONE. */
  get remainingMs(): number {
    return Math.max(0, this.at - now());
  }

  get expired(): boolean {
    return now() >= this.at;
  }

  /** The earlier of this deadline and one `timeoutMs` from now. */
  within(timeoutMs: number | undefined): Deadline {
    const other = Deadline.after(timeoutMs);
    return other.at < this.at ? other : this;
  }
}

export interface WaitOptions<T> {
  deadline?: Deadline;
  signal?: AbortSignal;
  /** Sees the promise's outcome when the deadline or the signal won, so its effect can be undone. */
  onLate?: (settled: PromiseSettledResult<T>) => void;
}

/**
 * Settles like `promise`; resolves TIMED_OUT when the deadline passes first; rejects with the
 * signal's reason when it aborts first. The promise itself goes on.
 */
export function waitFor<T>(promise: Promise<T>, options: WaitOptions<T> = {}): Promise<T | typeof TIMED_OUT> {
  const { deadline = Deadline.NONE, signal, onLate } = options;
  const late = (settled: PromiseSettledResult<T>) => onLate?.(settled);
  const passOn = () =>
    promise.then(
      (value) => late({ status: 'fulfilled', value }),
      (reason: unknown) => late({ status: 'rejected', reason }),
    );
  if (signal?.aborted) {
    passOn();
    return Promise.reject(abortReason(signal));
  }
  if (deadline.expired) {
    passOn();
    return Promise.resolve(TIMED_OUT);
  }
  if (!deadline.isFinite && !signal) return promise;
  return new Promise<T | typeof TIMED_OUT>((resolve, reject) => {
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      cancelTimer();
      signal?.removeEventListener('abort', onAbort);
      settle();
    };
    const onAbort = () =>
      finish(() => {
        passOn();
        reject(abortReason(signal as AbortSignal));
      });
    const cancelTimer = startTimer(deadline.remainingMs, () =>
      finish(() => {
        passOn();
        resolve(TIMED_OUT);
      }),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => finish(() => resolve(value)),
      (reason: unknown) => finish(() => reject(reason)),
    );
  });
}

/**
 * A signal for the operations of one timed call: it aborts when `signal` aborts (with its reason)
 * or when the deadline passes (with the scope's timeout reason, so the caller can tell the two
 * apart). Call `dispose()` when the call ends, to stop the timer and let go of `signal`.
 */
export class DeadlineScope {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly cancelTimer: () => void;
  private readonly onOuterAbort: () => void;
  /** The reason the deadline aborted with; undefined until then unless the caller gave one. */
  private reason: Error | undefined;

  /**
   * @param timeoutReason what the signal aborts with at the deadline. Without one, the scope makes
   *   its own when the deadline passes, for callers that only ask `isTimeout`: a call that ends in
   *   time then builds no error.
   */
  constructor(
    readonly deadline: Deadline,
    private readonly outer: AbortSignal | undefined,
    timeoutReason?: Error,
  ) {
    this.reason = timeoutReason;
    this.signal = this.controller.signal;
    // Every request of the call listens to it.
    setMaxListeners(Infinity, this.signal);
    this.onOuterAbort = () => this.controller.abort(abortReason(outer as AbortSignal));
    if (outer?.aborted) this.onOuterAbort();
    else outer?.addEventListener('abort', this.onOuterAbort, { once: true });
    this.cancelTimer = startTimer(deadline.remainingMs, () => this.controller.abort((this.reason ??= new Error('the deadline passed'))));
  }

  /** Whether the deadline, not the outer signal, ended the call. */
  get timedOut(): boolean {
    return this.signal.aborted && this.reason !== undefined && this.signal.reason === this.reason;
  }

  /** Whether `err` is this scope's own timeout. */
  isTimeout(err: unknown): boolean {
    return this.reason !== undefined && err === this.reason;
  }

  dispose(): void {
    this.cancelTimer();
    this.outer?.removeEventListener('abort', this.onOuterAbort);
  }
}
