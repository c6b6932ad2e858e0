import { ZkError, type ZkErrorOptions } from '../../src/recipeKit';

/**
 * A service instance node's data is not an instance in the JSON of Curator's
 * JsonInstanceSerializer: not JSON, or a field missing or of the wrong type. Curator's reader
 * fails on such a node too.
 */
export class ServiceInstanceFormatError extends ZkError {
  override name = 'ServiceInstanceFormatError';
  declare readonly code: 'BAD_DATA';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super('BAD_DATA', options.path === undefined ? message : `${message} (node ${options.path})`, options);
  }
}
