import { InvalidArgumentError } from '../errors';
import { describeValue } from '../validate';
import { isRetryableError, isSessionEndedError, type RetryPolicy } from './RetryPolicy';

/**
 * Wraps another policy and gives up when the session failed (the server's 'SESSIONEXPIRED', or the
 * client's 'SESSION_LOST'), since retrying in the same session cannot succeed, and on every
 * non-retryable error; any other error is decided by the delegate.
 */
export class SessionFailedRetryPolicy implements RetryPolicy {
  readonly delegate: RetryPolicy;

  /** @throws InvalidArgumentError when `delegate` has no `allowRetry` method. */
  constructor(delegate: RetryPolicy) {
    if (typeof (delegate as Partial<RetryPolicy> | null | undefined)?.allowRetry !== 'function') {
      throw new InvalidArgumentError(
        `delegate must be a RetryPolicy (an object with an allowRetry method), got ${describeValue(delegate)}`,
      );
    }
    this.delegate = delegate;
  }

  /** False for an ended session and non-retryable errors; otherwise what the delegate returns. */
  allowRetry(retryCount: number, elapsedMs: number, error: unknown): number | false {
    if (!isRetryableError(error) || isSessionEndedError(error)) return false;
    return this.delegate.allowRetry(retryCount, elapsedMs, error);
  }
}
