import { validateOptions, validatePositiveInt } from '../validate';
import { RetryNTimes } from './RetryNTimes';

/** Options of {@link RetryOneTime}. */
export interface RetryOneTimeOptions {
  /** Delay before the single retry in ms, a non-negative integer; required. */
  sleepMsBetweenRetry: number;
}

/**
 * Retries once, after `sleepMsBetweenRetry` ms: {@link RetryNTimes} with n = 1. Gives up at once
 * on non-retryable errors.
 */
export class RetryOneTime extends RetryNTimes {
  /** @throws InvalidArgumentError when `sleepMsBetweenRetry` is not a non-negative integer. */
  constructor(options: RetryOneTimeOptions) {
    super({ n: 1, sleepMsBetweenRetries: checkSleepMs(options) });
  }
}

function checkSleepMs(options: RetryOneTimeOptions): number {
  const opts = validateOptions(options, 'RetryOneTime options');
  return validatePositiveInt(opts.sleepMsBetweenRetry, 'sleepMsBetweenRetry', { min: 0 });
}
