import { validateOptions, validatePositiveInt } from '../validate';
import { ExponentialBackoffRetry } from './ExponentialBackoffRetry';

/** Options of {@link BoundedExponentialBackoffRetry}. */
export interface BoundedExponentialBackoffRetryOptions {
  /** Unit of the backoff in ms, a non-negative integer; default 1000. */
  baseSleepMs?: number;
  /** Longest delay returned, a non-negative integer; required. */
  maxSleepMs: number;
  /** Retries allowed, a non-negative integer; default 3; values above 29 are lowered to 29. */
  maxRetries?: number;
  /** Source of randomness in [0, 1); default Math.random. */
  random?: () => number;
}

/**
 * {@link ExponentialBackoffRetry} with a required, finite ceiling: before retry `k` (0-based) it
 * waits `min(maxSleepMs, baseSleepMs * max(1, r))` ms, `r` a random integer in `[0, 2^(k+1))`,
 * for at most `maxRetries` retries. Gives up at once on non-retryable errors.
 */
export class BoundedExponentialBackoffRetry extends ExponentialBackoffRetry {
  /** @throws InvalidArgumentError naming the first invalid option; `maxSleepMs` must be given. */
  constructor(options: BoundedExponentialBackoffRetryOptions) {
    super(checkBoundedOptions(options));
  }
}

function checkBoundedOptions(options: BoundedExponentialBackoffRetryOptions): BoundedExponentialBackoffRetryOptions {
  const opts = validateOptions(options, 'BoundedExponentialBackoffRetry options');
  validatePositiveInt(opts.maxSleepMs, 'maxSleepMs', { min: 0 });
  return options;
}
