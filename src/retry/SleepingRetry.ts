import { isRetryableError, type RetryPolicy } from './RetryPolicy';

/**
 * Base of the policies that wait a computed delay between attempts. It gives up on every error
 * that {@link isRetryableError} rejects, so subclasses only decide their limits and delays.
 */
export abstract class SleepingRetry implements RetryPolicy {
  /**
   * False when the error is not retryable or {@link withinLimits} says stop; otherwise the delay
   * from {@link sleepMs}.
   */
  allowRetry(retryCount: number, elapsedMs: number, error: unknown): number | false {
    if (!isRetryableError(error) || !this.withinLimits(retryCount, elapsedMs)) return false;
    return this.sleepMs(retryCount);
  }

  /** Whether one more retry is allowed after `retryCount` retries and `elapsedMs` ms. */
  protected abstract withinLimits(retryCount: number, elapsedMs: number): boolean;

  /** The delay before retry number `retryCount` (0-based); only called within the limits. */
  protected abstract sleepMs(retryCount: number): number;
}
