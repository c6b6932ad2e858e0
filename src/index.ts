/** The framework: client, connection states, retry policies, errors, paths. */
export * from './errors';
export * from './retry';
export * from './paths';
export { MAX_DATA_BYTES } from './validate';
export { ConnectionState, isConnectedState, isErrorState, type ConnectionStateErrorPolicy, type PreviousConnectionState } from './client/ConnectionState';
export { ZkClient, type ZkClientEvents } from './client/ZkClient';
export type { Session } from './client/Session';
export { TransactionError, TransactionOutcomeUnknownError, type Transaction, type CommitOptions, type TransactionResult, type TransactionOutcome, type TransactionOpType } from './client/Transaction';
export type { PersistentWatcher, PersistentWatch, PersistentWatchEvent, PersistentWatchEvents } from './client/PersistentWatcher';
export type { SessionCredentials, HasSessionCredentials } from './client/SessionCredentials';
export type { MultiReadResult, ReadOp, ClientIdentity } from './client/serverInfo';
export * from './watch';
export type {
  CreateOptions,
  DeleteOptions,
  WatchOptions,
  SetDataOptions,
  SetAclOptions,
  GetDataOptions,
  OperationOptions,
  BlockUntilConnectedOptions,
  StateListener,
  CreatedAndListed,
} from './client/ZkClient';
export { DEFAULT_CLIENT_OPTIONS, type ZkClientOptions, type ResolvedClientOptions, type AclProvider, type AuthInfo } from './client/options';
export { GzipCompressionProvider, type CompressionProvider, type GzipCompressionProviderOptions } from './client/compression';
export { Perms, type ACL, type CreateMode, type OptionalOperation, type Stat, type WatchEvent, type WatchEventType, type Watcher } from './transport/Transport';
export type { TransportName } from './client/chooseTransport';
export * from './metrics';
