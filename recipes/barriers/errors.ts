import { TimeoutError, type ZkErrorOptions } from '../../src/recipeKit';

/** A barrier wait (`waitOnBarrier`, `enter`, `leave`) ran out of time. */
export class BarrierTimeoutError extends TimeoutError {
  override name = 'BarrierTimeoutError';
  declare readonly code: 'BARRIER_TIMEOUT';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super(message, { ...options, code: 'BARRIER_TIMEOUT' });
  }
}
