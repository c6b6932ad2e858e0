/** What zk-recipes itself decided: bad input, a closed client, a wait that ran out, a lost session. */
import type { TimeoutErrorCode } from './codes';
import { ZkError, type ZkErrorOptions } from './ZkError';

/** Bad input caught before any I/O: a bad path, oversized data, a negative timeout, a wrong type. */
export class InvalidArgumentError extends ZkError {
  override name = 'InvalidArgumentError';
  declare readonly code: 'INVALID_ARGUMENT';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super('INVALID_ARGUMENT', message, options);
  }
}

/** The client was closed, or is closing, so the operation cannot run. */
export class ClientClosedError extends ZkError {
  override name = 'ClientClosedError';
  declare readonly code: 'CLIENT_CLOSED';
  constructor(message = 'the client is closed', options: ZkErrorOptions = {}) {
    super('CLIENT_CLOSED', message, options);
  }
}

/** A call made in the wrong state: a recipe started twice, used before start() or after close(). */
export class IllegalStateError extends ZkError {
  override name = 'IllegalStateError';
  declare readonly code: 'ILLEGAL_STATE';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super('ILLEGAL_STATE', message, options);
  }
}

/**
 * A timed wait ran out. Every timed wait of zk-recipes rejects with a subclass of this one (a
 * `try*` method resolves undefined instead). `code` tells the subclasses apart.
 */
export class TimeoutError extends ZkError {
  override name = 'TimeoutError';
  declare readonly code: TimeoutErrorCode;
  constructor(message: string, options: ZkErrorOptions & { code?: TimeoutErrorCode } = {}) {
    super(options.code ?? 'TIMEOUT', message, options);
  }
}

/**
 * No connection within the time allowed. The message says where the client tried to connect,
 * why the last attempt failed when it is known (refused, host not found, timed out), and how long
 * it waited. Operations retry it like a connection loss.
 */
export class ConnectionTimeoutError extends TimeoutError {
  override name = 'ConnectionTimeoutError';
  declare readonly code: 'CONNECTION_TIMEOUT';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super(message, { ...options, code: 'CONNECTION_TIMEOUT' });
  }
}

/** Why a session ended, as the client saw it. */
export type SessionEndReason =
  /** The server expired it. */
  | 'expired'
  /** The client went longer without hearing from the server than the server keeps a silent session. */
  | 'suspendedTooLong'
  /** The server refused the client's credentials. */
  | 'authFailed'
  /** The client was closed. */
  | 'closed';

/**
 * The session an operation or a recipe relied on has ended (a read pinned to a session, a
 * session's signal). Operations not pinned to a session retry it in the next one.
 */
export class SessionLostError extends ZkError {
  override name = 'SessionLostError';
  declare readonly code: 'SESSION_LOST';
  constructor(
    readonly reason: SessionEndReason,
    message: string,
    options: ZkErrorOptions = {},
  ) {
    super('SESSION_LOST', message, options);
  }
}

/** A feature the chosen transport cannot provide was asked for. */
export class UnsupportedError extends ZkError {
  override name = 'UnsupportedError';
  declare readonly code: 'UNSUPPORTED';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super('UNSUPPORTED', message, options);
  }
}

/**
 * Node data could not be compressed for a write, or read data could not be decompressed (with
 * `compressed: true`, or the client's `enableCompression`): the data is not what the compression
 * provider writes (not gzip, truncated, corrupt), or the provider threw. `operation` says which;
 * `cause` is the provider's own error (zlib's, for the gzip provider). Nothing was written.
 */
export class CompressionError extends ZkError {
  override name = 'CompressionError';
  declare readonly code: 'COMPRESSION_FAILED';
  constructor(
    readonly operation: 'compress' | 'decompress',
    message: string,
    options: ZkErrorOptions = {},
  ) {
    super('COMPRESSION_FAILED', message, options);
  }
}
