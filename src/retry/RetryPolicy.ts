import { RETRYABLE_CODES, ZkError } from '../errors';

/**
 * Decides whether, and after how long, a failed ZooKeeper operation is attempted again.
 * Implementations are pure: they compute a delay and never sleep themselves.
 */
export interface RetryPolicy {
  /**
   * Returns the delay in ms before the next attempt, or false to give up. Pure: never sleeps.
   *
   * @param retryCount the number of retries already made (0 for the first retry).
   * @param elapsedMs the time since the operation's first attempt.
   * @param error what the last attempt threw.
   */
  allowRetry(retryCount: number, elapsedMs: number, error: unknown): number | false;
}

/**
 * True exactly when `err` is a {@link ZkError} whose code is in {@link RETRYABLE_CODES}
 * (CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONMOVED, SESSIONEXPIRED): another attempt may succeed.
 * Every policy in this module gives up on any other error.
 */
export function isRetryableError(err: unknown): boolean {
  return err instanceof ZkError && RETRYABLE_CODES.has(err.code);
}
