import { TimeoutError, type ZkErrorOptions } from '../../src/recipeKit';

/** `waitForInitialized` of a cache ran out of time. */
export class CacheTimeoutError extends TimeoutError {
  override name = 'CacheTimeoutError';
  declare readonly code: 'CACHE_TIMEOUT';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super(message, { ...options, code: 'CACHE_TIMEOUT' });
  }
}
