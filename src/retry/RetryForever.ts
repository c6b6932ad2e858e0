import { validateOptions, validatePositiveInt } from '../validate';
import { SleepingRetry } from './SleepingRetry';

/** Options of {@link RetryForever}. */
export interface RetryForeverOptions {
  /** Delay before every retry in ms, a positive integer; required. */
  retryIntervalMs: number;
}

/**
 * Retries without limit, waiting `retryIntervalMs` ms before each retry. Gives up only on
 * non-retryable errors.
 */
export class RetryForever extends SleepingRetry {
  readonly retryIntervalMs: number;

  /**
   * @throws InvalidArgumentError when `retryIntervalMs` is not a positive integer (like Curator,
   *   0 is refused: an endless retry loop with no pause would spin).
   */
  constructor(options: RetryForeverOptions) {
    const opts = validateOptions(options, 'RetryForever options');
    const retryIntervalMs = validatePositiveInt(opts.retryIntervalMs, 'retryIntervalMs', { min: 1 });
    super();
    this.retryIntervalMs = retryIntervalMs;
  }

  protected override withinLimits(): boolean {
    return true;
  }

  protected override sleepMs(): number {
    return this.retryIntervalMs;
  }
}
