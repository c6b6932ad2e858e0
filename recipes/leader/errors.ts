import { TimeoutError, ZkError, type ZkErrorOptions } from '../../src/recipeKit';

/** Why a LeaderSelector ended a leadership itself: `interruptLeadership()` or `close()`. */
export type LeadershipInterruptReason = 'INTERRUPTED' | 'CLOSED';

/**
 * The reason `takeLeadership`'s signal aborts with when the selector ends the leadership itself.
 * (When the lock can no longer be trusted, the reason is the lease's LockLostError instead.)
 */
export class LeadershipInterruptedError extends ZkError {
  override name = 'LeadershipInterruptedError';
  declare readonly code: 'LEADERSHIP_INTERRUPTED';
  constructor(
    readonly reason: LeadershipInterruptReason,
    options: ZkErrorOptions = {},
  ) {
    super('LEADERSHIP_INTERRUPTED', `leadership at ${options.path ?? '?'} ended: ${reason === 'CLOSED' ? 'the selector closed' : 'interrupted'}`, options);
  }
}

/** What a closed (or never started) LeaderLatch's `await` rejects with. `cause` says why, when the client's closing closed it. */
export class LeaderLatchClosedError extends ZkError {
  override name = 'LeaderLatchClosedError';
  declare readonly code: 'LATCH_CLOSED';
  constructor(options: ZkErrorOptions & { state?: string } = {}) {
    super('LATCH_CLOSED', `the LeaderLatch at ${options.path ?? '?'} is ${options.state ?? 'closed'}`, options);
  }
}

/** `LeaderLatch.await({ timeoutMs })` ran out of time before the latch led. */
export class LeaderTimeoutError extends TimeoutError {
  override name = 'LeaderTimeoutError';
  declare readonly code: 'LEADER_TIMEOUT';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super(message, { ...options, code: 'LEADER_TIMEOUT' });
  }
}
