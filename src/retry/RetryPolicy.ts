import { ZkError } from '../errors';

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
 * The codes after which another attempt may succeed: Curator's (CONNECTIONLOSS, OPERATIONTIMEOUT,
 * SESSIONMOVED, SESSIONEXPIRED), and the library's own two for the same situations: no connection
 * within the connection timeout (CONNECTION_TIMEOUT, where Curator reports a CONNECTIONLOSS), and
 * a session the client itself declared ended (SESSION_LOST).
 */
const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'CONNECTIONLOSS',
  'OPERATIONTIMEOUT',
  'SESSIONMOVED',
  'SESSIONEXPIRED',
  'CONNECTION_TIMEOUT',
  'SESSION_LOST',
]);

/**
 * True exactly when `err` is a {@link ZkError} after which another attempt may succeed (see
 * RETRYABLE_CODES). Every policy in this module gives up on any other error.
 */
export function isRetryableError(err: unknown): boolean {
  return err instanceof ZkError && RETRYABLE_CODES.has(err.code);
}

/** True when `err` says that a session ended: the server's SESSIONEXPIRED, or the client's SESSION_LOST. */
export function isSessionEndedError(err: unknown): boolean {
  return err instanceof ZkError && (err.code === 'SESSIONEXPIRED' || err.code === 'SESSION_LOST');
}
