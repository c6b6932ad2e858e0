import { ZkError, type ZkErrorOptions } from '../../src/errors';

/** Why a LeaderSelector ended a leadership itself: `interruptLeadership()` or `close()`. */
export type LeadershipInterruptReason = 'INTERRUPTED' | 'CLOSED';

/**
 * The reason `takeLeadership`'s signal aborts with when the selector ends the leadership itself.
 * (When the lock can no longer be trusted, the reason is the lease's LockLostError instead.)
 */
export class LeadershipInterruptedError extends ZkError {
  override name = 'LeadershipInterruptedError';
  constructor(
    readonly reason: LeadershipInterruptReason,
    options: ZkErrorOptions = {},
  ) {
    super('LEADERSHIP_INTERRUPTED', `leadership at ${options.path ?? '?'} ended: ${reason === 'CLOSED' ? 'the selector closed' : 'interrupted'}`, options);
  }
}

/** The reason a closed LeaderLatch's pending requests abort with. */
export class LeaderLatchClosedError extends ZkError {
  override name = 'LeaderLatchClosedError';
  constructor(options: ZkErrorOptions = {}) {
    super('LATCH_CLOSED', `the LeaderLatch at ${options.path ?? '?'} is closed`, options);
  }
}
