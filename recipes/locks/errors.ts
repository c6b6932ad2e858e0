import { TimeoutError, ZkError, type ZkErrorOptions } from '../../src/recipeKit';

/** An acquire ran out of time before it got the lock. No node of the attempt is left behind. */
export class LockTimeoutError extends TimeoutError {
  override name = 'LockTimeoutError';
  declare readonly code: 'LOCK_TIMEOUT';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super(message, { ...options, code: 'LOCK_TIMEOUT' });
  }
}

/** Why a held lock can no longer be trusted. */
export type LockLostReason =
  /** The connection is SUSPENDED and the client's error policy is 'standard'. */
  | 'SUSPENDED'
  /** The session is LOST: it expired, or the server was not heard from for as long as it keeps a silent session. */
  | 'LOST'
  /** The client was closed: its session ended with it. */
  | 'CLIENT_CLOSED'
  /** Our lock node was deleted. */
  | 'NODE_DELETED'
  /** Our lock node belongs to another session (CURATOR-604). */
  | 'NOT_OUR_NODE'
  /** The lease was released. */
  | 'RELEASED';

/** The reason a lease's signal aborts with: the lock can no longer be trusted. */
export class LockLostError extends ZkError {
  override name = 'LockLostError';
  declare readonly code: 'LOCK_LOST';
  constructor(
    readonly reason: LockLostReason,
    options: ZkErrorOptions = {},
  ) {
    super('LOCK_LOST', `the lock at ${options.path ?? '?'} can no longer be trusted: ${reason}`, options);
  }
}

/** A release by someone who does not hold the lock. */
export class NotLockOwnerError extends ZkError {
  override name = 'NotLockOwnerError';
  declare readonly code: 'NOT_LOCK_OWNER';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super('NOT_LOCK_OWNER', message, options);
  }
}
