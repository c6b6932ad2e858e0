/**
 * Every `code` a zk-recipes error can have, as string literal unions: a `switch (err.code)` is
 * checked by the compiler, and `isZkError(err, code)` takes only codes that exist. ZooKeeper's
 * own are listed here too, by their number on the wire, so that the error classes all import
 * their codes from this file and it imports none of them.
 */

/**
 * ZooKeeper's error codes (KeeperException.Code), by their numeric value on the wire, and the C
 * client's own (-9 INVALIDSTATE, -116 CLOSING, -117 NOTHING). -122 REQUESTTIMEOUT is the Java
 * client's own and never comes from a server.
 */
export const SERVER_ERROR_CODES = Object.freeze({
  [-1]: 'SYSTEMERROR',
  [-2]: 'RUNTIMEINCONSISTENCY',
  [-3]: 'DATAINCONSISTENCY',
  [-4]: 'CONNECTIONLOSS',
  [-5]: 'MARSHALLINGERROR',
  [-6]: 'UNIMPLEMENTED',
  [-7]: 'OPERATIONTIMEOUT',
  [-8]: 'BADARGUMENTS',
  [-9]: 'INVALIDSTATE',
  [-12]: 'UNKNOWNSESSION',
  [-13]: 'NEWCONFIGNOQUORUM',
  [-14]: 'RECONFIGINPROGRESS',
  [-15]: 'SSLCONNECTIONERROR',
  [-100]: 'APIERROR',
  [-101]: 'NONODE',
  [-102]: 'NOAUTH',
  [-103]: 'BADVERSION',
  [-108]: 'NOCHILDRENFOREPHEMERALS',
  [-110]: 'NODEEXISTS',
  [-111]: 'NOTEMPTY',
  [-112]: 'SESSIONEXPIRED',
  [-113]: 'INVALIDCALLBACK',
  [-114]: 'INVALIDACL',
  [-115]: 'AUTHFAILED',
  [-116]: 'CLOSING',
  [-117]: 'NOTHING',
  [-118]: 'SESSIONMOVED',
  [-119]: 'NOTREADONLY',
  [-120]: 'EPHEMERALONLOCALSESSION',
  [-121]: 'NOWATCHER',
  [-122]: 'REQUESTTIMEOUT',
  [-123]: 'RECONFIGDISABLED',
  [-124]: 'SESSIONCLOSEDREQUIRESASLAUTH',
  [-125]: 'QUOTAEXCEEDED',
  [-127]: 'THROTTLEDOP',
} as const);

/** Every code ZooKeeper can answer with. */
export type ServerErrorCode = (typeof SERVER_ERROR_CODES)[keyof typeof SERVER_ERROR_CODES];

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
  /** CompressionError: data could not be compressed, or read data could not be decompressed. */
  | 'COMPRESSION_FAILED'
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
