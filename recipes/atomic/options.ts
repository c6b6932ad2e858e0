import {
  abortReason,
  describeValue,
  InvalidArgumentError,
  RetryNTimes,
  type RetryPolicy,
  validateOptions,
  validateRecipePath,
  validateSignal,
  validateTimeout,
  type ZkClient,
} from '../../src/recipeKit';

/**
 * Curator's PromotedToLock: when optimistic attempts give up, take an InterProcessMutex at
 * `lockPath` and try again while holding it, under its own retry policy. Writers that all promote
 * to the same lock path then take turns instead of racing.
 */
export interface PromotedToLock {
  /** The mutex's path (Curator's `lockPath`, required). */
  lockPath: string;
  /** How long to wait for the mutex; undefined waits as long as it takes (Curator's `timeout`). When it runs out, the operation does not succeed. */
  timeoutMs?: number;
  /** The retry policy of the attempts under the lock; default one attempt (Curator's `RetryNTimes(0, 0)`). */
  retryPolicy?: RetryPolicy;
}

/** Options of the atomic values. Defaults are in `ATOMIC_DEFAULTS`. */
export interface DistributedAtomicOptions {
  /**
   * Asked after each optimistic attempt that lost a race (with an AtomicContentionError, which is
   * retryable) whether, and after how long, to try again.
   */
  retryPolicy?: RetryPolicy;
  /** Promote to a lock when the optimistic attempts give up. Off by default (Curator's optimistic-only mode). */
  promotedToLock?: PromotedToLock;
}

/** Options of each operation. */
export interface AtomicOperationOptions {
  /** Aborts the operation (its retries and the wait for the promoted lock): it rejects with `signal.reason`. */
  signal?: AbortSignal;
}

/** The defaults, frozen: ten optimistic attempts after the first, 10 ms apart. */
export const ATOMIC_DEFAULTS = Object.freeze({
  retryPolicy: new RetryNTimes({ n: 10, sleepMsBetweenRetries: 10 }) as RetryPolicy,
  promotedRetryPolicy: new RetryNTimes({ n: 0, sleepMsBetweenRetries: 0 }) as RetryPolicy,
});

/** Resolved options. */
export interface ResolvedAtomicOptions {
  readonly retryPolicy: RetryPolicy;
  readonly promoted: { readonly lockPath: string; readonly timeoutMs: number | undefined; readonly retryPolicy: RetryPolicy } | undefined;
}

function validatePolicy(value: unknown, name: string): RetryPolicy {
  if (typeof value !== 'object' || value === null || typeof (value as RetryPolicy).allowRetry !== 'function') {
    throw new InvalidArgumentError(`${name} must be a RetryPolicy (an object with allowRetry), got ${describeValue(value)}`);
  }
  return value as RetryPolicy;
}

/** Checks the options of an atomic value. @throws InvalidArgumentError */
export function resolveAtomicOptions(client: ZkClient, options: DistributedAtomicOptions | undefined): ResolvedAtomicOptions {
  const o = validateOptions(options, 'options');
  const retryPolicy = o.retryPolicy === undefined ? ATOMIC_DEFAULTS.retryPolicy : validatePolicy(o.retryPolicy, 'retryPolicy');
  if (o.promotedToLock === undefined) return { retryPolicy, promoted: undefined };
  const p = validateOptions(o.promotedToLock, 'promotedToLock');
  return {
    retryPolicy,
    promoted: {
      lockPath: validateRecipePath(client, p.lockPath, 'promoted lock'),
      timeoutMs: validateTimeout(p.timeoutMs, 'promotedToLock.timeoutMs'),
      retryPolicy: p.retryPolicy === undefined ? ATOMIC_DEFAULTS.promotedRetryPolicy : validatePolicy(p.retryPolicy, 'promotedToLock.retryPolicy'),
    },
  };
}

/** Checks the options of one operation. @throws InvalidArgumentError, or the signal's reason when it is aborted already */
export function operationSignal(options: AtomicOperationOptions | undefined): AbortSignal | undefined {
  const signal = validateSignal(validateOptions(options, 'options').signal);
  if (signal?.aborted) throw abortReason(signal);
  return signal;
}
