/**
 * The base of every error zk-recipes throws. Two branches grow from it, as in kazoo's exceptions:
 * - server errors (`ServerError` and its families): what ZooKeeper answered, with ZooKeeper's own
 *   code ('NONODE', 'CONNECTIONLOSS', ...);
 * - library errors (`InvalidArgumentError`, `TimeoutError`, `LockLostError`, ...): what zk-recipes
 *   decided, with the library's own code ('INVALID_ARGUMENT', 'TIMEOUT', ...).
 */

export interface ZkErrorOptions {
  /** The path the operation was about, relative to the client's namespace. */
  path?: string;
  cause?: unknown;
}

/**
 * Base of every zk-recipes error.
 * - `code`: ZooKeeper's code for server errors ('NONODE', ...), the library's for its own.
 * - `path`: the path the operation was about, when there is one.
 */
export class ZkError extends Error {
  override name = 'ZkError';
  readonly code: string;
  readonly path: string | undefined;

  constructor(code: string, message: string, options: ZkErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.path = options.path;
  }
}

/** True when `err` is a ZkError, with the given code when one is given. */
export function isZkError(err: unknown, code?: string): err is ZkError {
  return err instanceof ZkError && (code === undefined || err.code === code);
}
