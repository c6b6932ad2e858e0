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
 * SESSIONMOVED, SESSIONEXPIRED), and the client's own for the same situations: no connection
 * within the connection timeout (CONNECTION_TIMEOUT, where Curator reports a CONNECTIONLOSS), and a
 * session the client itself declared ended (SESSION_LOST). A recipe's own transient failures are
 * not listed here: the recipe marks them (see markRetryable).
 */
const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'CONNECTIONLOSS',
  'OPERATIONTIMEOUT',
  'SESSIONMOVED',
  'SESSIONEXPIRED',
  'CONNECTION_TIMEOUT',
  'SESSION_LOST',
]);

// Errors that their recipe declared retryable. A WeakSet, not a property, so that the mark adds
// nothing to an error's public shape and is forgotten with the error.
const markedRetryable = new WeakSet<ZkError>();

/**
 * Declares `err` one after which another attempt may succeed, though its code is a recipe's own:
 * an atomic value's lost race, say, which it asks its retry policy about as Curator's does. Every
 * policy in this module then treats it as it treats a CONNECTIONLOSS. Returns `err`.
 */
export function markRetryable<E extends ZkError>(err: E): E {
  markedRetryable.add(err);
  return err;
}

/**
 * True exactly when `err` is a {@link ZkError} after which another attempt may succeed: a code of
 * RETRYABLE_CODES, or an error marked by {@link markRetryable}. Every policy in this module gives
 * up on any other error.
 */
export function isRetryableError(err: unknown): boolean {
  return err instanceof ZkError && (RETRYABLE_CODES.has(err.code) || markedRetryable.has(err));
}

/** True when `err` says that a session ended: the server's SESSIONEXPIRED, or the client's SESSION_LOST. */
export function isSessionEndedError(err: unknown): boolean {
  return err instanceof ZkError && (err.code === 'SESSIONEXPIRED' || err.code === 'SESSION_LOST');
}
