/** Retry policies with Apache Curator's semantics. */
export { isRetryableError, isSessionEndedError, type RetryPolicy } from './RetryPolicy';
export { SleepingRetry } from './SleepingRetry';
export { ExponentialBackoffRetry, type ExponentialBackoffRetryOptions } from './ExponentialBackoffRetry';
export {
  BoundedExponentialBackoffRetry,
  type BoundedExponentialBackoffRetryOptions,
} from './BoundedExponentialBackoffRetry';
export { RetryNTimes, type RetryNTimesOptions } from './RetryNTimes';
export { RetryOneTime, type RetryOneTimeOptions } from './RetryOneTime';
export { RetryForever, type RetryForeverOptions } from './RetryForever';
export { RetryUntilElapsed, type RetryUntilElapsedOptions } from './RetryUntilElapsed';
export { SessionFailedRetryPolicy } from './SessionFailedRetryPolicy';
