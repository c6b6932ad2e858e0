/** Typed errors: the ZkError base, server errors (what ZooKeeper answered) and library errors (what zk-recipes decided). */
export { ZkError, isZkError, type ZkErrorOptions } from './ZkError';
export { SERVER_ERROR_CODES, type ZkErrorCode, type LibraryErrorCode, type TimeoutErrorCode, type ServerErrorCode } from './codes';
export {
  ServerError,
  ConnectionLossError,
  SessionError,
  NodeError,
  AuthError,
  SystemError,
  serverError,
  isServerErrorCode,
  type ConnectionLossCode,
  type SessionErrorCode,
  type NodeErrorCode,
  type AuthErrorCode,
  type SystemErrorCode,
} from './serverErrors';
export {
  InvalidArgumentError,
  ClientClosedError,
  IllegalStateError,
  TimeoutError,
  ConnectionTimeoutError,
  SessionLostError,
  UnsupportedError,
  CompressionError,
  type SessionEndReason,
} from './libraryErrors';
