/**
 * Every `code` a zk-recipes error can have, as string literal unions: a `switch (err.code)` is
 * checked by the compiler, and `isZkError(err, code)` takes only codes that exist.
 */
import type { ServerErrorCode } from './serverErrors';

/** The codes of the library's timeouts: `TimeoutError` and its subclasses, one code each. */
export type TimeoutErrorCode =
  | 'TIMEOUT'
  | 'CONNECTION_TIMEOUT'
  | 'LOCK_TIMEOUT'
  | 'LEADER_TIMEOUT'
  | 'QUEUE_TIMEOUT'
  | 'BARRIER_TIMEOUT'
  | 'CACHE_TIMEOUT'
  | 'PERSISTENT_NODE_TIMEOUT';

/** What zk-recipes itself decided, by error class (the class's name is in the comment). */
export type LibraryErrorCode =
  /** InvalidArgumentError */
  | 'INVALID_ARGUMENT'
  /** ClientClosedError */
  | 'CLIENT_CLOSED'
  /** IllegalStateError */
  | 'ILLEGAL_STATE'
  /** SessionLostError */
  | 'SESSION_LOST'
  /** UnsupportedError */
  | 'UNSUPPORTED'
  /** ProtocolError: the server sent bytes the client cannot trust (only ever a `cause`). */
  | 'PROTOCOL_ERROR'
  /** TransactionError */
  | 'TRANSACTION_FAILED'
  /** TransactionOutcomeUnknownError: a safe commit that cannot tell whether it went in, or all it gave. */
  | 'OUTCOME_UNKNOWN'
  /** LockLostError */
  | 'LOCK_LOST'
  /** NotLockOwnerError */
  | 'NOT_LOCK_OWNER'
  /** LockUpgradeError */
  | 'LOCK_UPGRADE'
  /** LeadershipInterruptedError */
  | 'LEADERSHIP_INTERRUPTED'
  /** LeaderLatchClosedError */
  | 'LATCH_CLOSED'
  /** AtomicContentionError */
  | 'CONTENDED'
  /** AtomicValueCorruptError */
  | 'BAD_DATA'
  /** QueueSerializationError */
  | 'QUEUE_SERIALIZATION'
  /** NoSuchElementError */
  | 'NO_SUCH_ELEMENT'
  /** QueueItemLockLostError */
  | 'QUEUE_ITEM_LOCK_LOST'
  /** HarnessSetupError (zk-recipes/testing): Java or ZooKeeper is missing. */
  | 'HARNESS_SETUP'
  | TimeoutErrorCode;

/** Every code: ZooKeeper's own (server errors) and the library's. */
export type ZkErrorCode = ServerErrorCode | LibraryErrorCode;
