/**
 * The base of every error zk-recipes throws. Two branches grow from it, as in kazoo's exceptions:
 * - server errors (`ServerError` and its families): what ZooKeeper answered, with ZooKeeper's own
 *   code ('NONODE', 'CONNECTIONLOSS', ...);
 * - library errors (`InvalidArgumentError`, `TimeoutError`, `LockLostError`, ...): what zk-recipes
 *   decided, with the library's own code ('INVALID_ARGUMENT', 'TIMEOUT', ...).
 */
import type { ZkErrorCode } from './codes';

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
  readonly code: ZkErrorCode;
  readonly path: string | undefined;

  constructor(code: ZkErrorCode, message: string, options: ZkErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.path = options.path;
  }
}

/** True when `err` is a ZkError. */
export function isZkError(err: unknown): err is ZkError;
/**
 * True when `err` is a ZkError with the code `code`; `err.code` is then narrowed to it. Only
 * known codes compile (see ZkErrorCode).
 */
export function isZkError<C extends ZkErrorCode>(err: unknown, code: C): err is ZkError & { readonly code: C };
export function isZkError(err: unknown, code?: ZkErrorCode): err is ZkError {
  return err instanceof ZkError && (code === undefined || err.code === code);
}
