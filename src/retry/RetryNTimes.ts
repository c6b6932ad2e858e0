import { validateOptions, validatePositiveInt } from '../validate';
import { SleepingRetry } from './SleepingRetry';

/** Options of {@link RetryNTimes}; both required. */
export interface RetryNTimesOptions {
  /** Retries allowed, a non-negative integer. */
  n: number;
  /** Delay before every retry in ms, a non-negative integer. */
  sleepMsBetweenRetries: number;
}

/**
 * Retries at most `n` times (while retryCount < n), waiting `sleepMsBetweenRetries` ms before
 * each. Gives up at once on non-retryable errors.
 */
export class RetryNTimes extends SleepingRetry {
  readonly n: number;
  readonly sleepMsBetweenRetries: number;

  /** @throws InvalidArgumentError naming the first invalid option. */
  constructor(options: RetryNTimesOptions) {
    const opts = validateOptions(options, 'RetryNTimes options');
    const n = validatePositiveInt(opts.n, 'n', { min: 0 });
    const sleepMs = validatePositiveInt(opts.sleepMsBetweenRetries, 'sleepMsBetweenRetries', { min: 0 });
    super();
    this.n = n;
    this.sleepMsBetweenRetries = sleepMs;
  }

  protected override withinLimits(retryCount: number): boolean {
    return retryCount < this.n;
  }

  protected override sleepMs(): number {
    return this.sleepMsBetweenRetries;
  }
}
