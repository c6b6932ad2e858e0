import { TimeoutError, type ZkErrorOptions } from '../../src/recipeKit';

/** `waitForInitialCreate` or `setData` of a PersistentNode (or PersistentTtlNode) ran out of time. */
export class PersistentNodeTimeoutError extends TimeoutError {
  override name = 'PersistentNodeTimeoutError';
  declare readonly code: 'PERSISTENT_NODE_TIMEOUT';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super(message, { ...options, code: 'PERSISTENT_NODE_TIMEOUT' });
  }
}
