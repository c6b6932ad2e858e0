import { validateOptions, validatePositiveInt } from '../validate';
import { SleepingRetry } from './SleepingRetry';

/** Options of {@link RetryUntilElapsed}; both required. */
export interface RetryUntilElapsedOptions {
  /** Retries are allowed while less than this many ms have passed; a non-negative integer. */
  maxElapsedTimeMs: number;
  /** Delay before every retry in ms, a non-negative integer. */
  sleepMsBetweenRetries: number;
}

/**
 * Retries, waiting `sleepMsBetweenRetries` ms before each, as long as less than
 * `maxElapsedTimeMs` ms have passed since the first attempt (elapsedMs < maxElapsedTimeMs).
 * Gives up at once on non-retryable errors.
 */
export class RetryUntilElapsed extends SleepingRetry {
  readonly maxElapsedTimeMs: number;
  readonly sleepMsBetweenRetries: number;

  /** @throws InvalidArgumentError naming the first invalid option. */
  constructor(options: RetryUntilElapsedOptions) {
    const opts = validateOptions(options, 'RetryUntilElapsed options');
    const maxElapsedTimeMs = validatePositiveInt(opts.maxElapsedTimeMs, 'maxElapsedTimeMs', { min: 0 });
    const sleepMs = validatePositiveInt(opts.sleepMsBetweenRetries, 'sleepMsBetweenRetries', { min: 0 });
    super();
    this.maxElapsedTimeMs = maxElapsedTimeMs;
    this.sleepMsBetweenRetries = sleepMs;
  }

  protected override withinLimits(_retryCount: number, elapsedMs: number): boolean {
    return elapsedMs < this.maxElapsedTimeMs;
  }

  protected override sleepMs(): number {
    return this.sleepMsBetweenRetries;
  }
}
