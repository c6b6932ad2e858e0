// The declarations use Node's types (Buffer, node:events): this reference brings them in for a
// project whose tsconfig lists no `types` (the default from TypeScript 6 on).
/// <reference types="node" preserve="true" />
/**
 * zk-recipes: Apache Curator's ZooKeeper recipes for Node.js.
 *
 * The public API, listed name by name: what the recipes are built from (lock internals and drivers,
 * the queue consumer engine, node naming and encoding) stays out, and is in `zk-recipes/internals`
 * for the CLI, the benchmarks and interop tests. `etc/zk-recipes.api.md` is the report of this list:
 * `npm run api` updates it when the public surface changes on purpose. Members tagged internal
 * (the constructors of what the client makes, the recipes' seams on the client) are left out of the
 * published declarations.
 *
 * @packageDocumentation
 */
// The framework: errors, retry policies, paths, the client and its watches, metrics.
export {
  ZkError,
  isZkError,
  SERVER_ERROR_CODES,
  ServerError,
  ConnectionLossError,
  SessionError,
  NodeError,
  AuthError,
  SystemError,
  serverError,
  isServerErrorCode,
  InvalidArgumentError,
  ClientClosedError,
  IllegalStateError,
  TimeoutError,
  ConnectionTimeoutError,
  SessionLostError,
  UnsupportedError,
  CompressionError,
  type ZkErrorOptions,
  type ZkErrorCode,
  type LibraryErrorCode,
  type TimeoutErrorCode,
  type ServerErrorCode,
  type ConnectionLossCode,
  type SessionErrorCode,
  type NodeErrorCode,
  type AuthErrorCode,
  type SystemErrorCode,
  type SessionEndReason,
} from './src/errors';
export {
  isRetryableError,
  isSessionEndedError,
  SleepingRetry,
  ExponentialBackoffRetry,
  BoundedExponentialBackoffRetry,
  RetryNTimes,
  RetryOneTime,
  RetryForever,
  RetryUntilElapsed,
  SessionFailedRetryPolicy,
  type RetryPolicy,
  type ExponentialBackoffRetryOptions,
  type BoundedExponentialBackoffRetryOptions,
  type RetryNTimesOptions,
  type RetryOneTimeOptions,
  type RetryForeverOptions,
  type RetryUntilElapsedOptions,
} from './src/retry';
export { validatePath, joinPath, parentOf, nodeName, splitPath, validateNamespace, withNamespace, withoutNamespace, type ValidatePathOptions } from './src/paths';
export { MAX_DATA_BYTES } from './src/validate';
export { ConnectionState, isConnectedState, isErrorState, type ConnectionStateErrorPolicy, type PreviousConnectionState } from './src/client/ConnectionState';
export {
  ZkClient,
  type ZkClientEvents,
  type CreateOptions,
  type DeleteOptions,
  type WatchOptions,
  type SetDataOptions,
  type SetAclOptions,
  type GetDataOptions,
  type OperationOptions,
  type BlockUntilConnectedOptions,
  type StateListener,
} from './src/client/ZkClient';
export { DEFAULT_CLIENT_OPTIONS, type ZkClientOptions, type ResolvedClientOptions, type AclProvider, type AuthInfo } from './src/client/options';
export { GzipCompressionProvider, type CompressionProvider, type GzipCompressionProviderOptions } from './src/client/compression';
// Sessions, transactions and persistent watchers come from the client: their types are public, their
// constructors are not (a type-only export, and the constructors are tagged internal).
export type { Session } from './src/client/Session';
export { TransactionError, TransactionOutcomeUnknownError, type Transaction, type CommitOptions, type TransactionResult, type TransactionOutcome, type TransactionOpType } from './src/client/Transaction';
export type { PersistentWatcher, PersistentWatch, PersistentWatchEvent, PersistentWatchEvents } from './src/client/PersistentWatcher';
export type { SessionCredentials, HasSessionCredentials } from './src/client/SessionCredentials';
export type { MultiReadResult, ReadOp, ClientIdentity } from './src/client/serverInfo';
export type { WatchKind } from './src/client/OneShotWatches';
export { NodeWatch, ChildrenWatch, type NodeData, type NodeChildren, type Watch, type NodeWatchOptions, type WatchListener } from './src/watch';
export {
  Perms,
  type ACL,
  type AddWatchMode,
  type CreateMode,
  type OptionalOperation,
  type Stat,
  type WatchEvent,
  type WatchEventType,
  type Watcher,
} from './src/transport/Transport';
export type { TransportName } from './src/client/chooseTransport';
export {
  METRICS_CHANNELS,
  exportPrometheusMetrics,
  type OperationEvent,
  type StateEvent,
  type LockRecipe,
  type LockWaitEvent,
  type LockHoldEvent,
  type LeadershipEvent,
  type QueueEvent,
  type PromClientLike,
  type PromMetricLike,
  type PrometheusExportOptions,
} from './src/metrics';
export {
  InterProcessMutex,
  InterProcessReadWriteLock,
  InterProcessSemaphoreV2,
  InterProcessSemaphoreMutex,
  InterProcessMultiLock,
  MultiLease,
  Revoker,
  LockTimeoutError,
  LockLostError,
  NotLockOwnerError,
  LockUpgradeError,
  type InterProcessLock,
  type AcquireOptions,
  type Lease,
  type LockLostReason,
  type InterProcessReadWriteLockOptions,
  type SemaphoreOptions,
  type SemaphoreLimit,
  type SemaphoreAcquireOptions,
} from './recipes/locks';
export type { TryAcquireOptions } from './recipes/locks/InterProcessLock';
export type { InterProcessMutexOptions } from './recipes/locks/InterProcessMutex';
export {
  LeaderLatch,
  LEADER_LATCH_DEFAULTS,
  LeaderSelector,
  LEADER_SELECTOR_DEFAULTS,
  observeLeader,
  LeadershipInterruptedError,
  LeaderLatchClosedError,
  LeaderTimeoutError,
  type LeaderLatchOptions,
  type LeaderLatchCloseMode,
  type LeaderLatchAwaitOptions,
  type LeaderLatchEvents,
  type LeaderSelectorEvents,
  type LeaderSelectorOptions,
  type TakeLeadership,
  type LeaderInfo,
  type ObserveLeaderOptions,
  type Participant,
  type LeadershipInterruptReason,
} from './recipes/leader';
export {
  DistributedQueue,
  DistributedPriorityQueue,
  DistributedDelayQueue,
  DistributedIdQueue,
  SimpleDistributedQueue,
  type QueueBase,
  QUEUE_DEFAULTS,
  QueueSerializationError,
  NoSuchElementError,
  QueueItemLockLostError,
  QueueTimeoutError,
  bytesSerializer,
  curatorItemSerializer,
  defaultSerializer,
  jsonSerializer,
  utf8Serializer,
  type TakeOptions,
  type QueueOptions,
  type PutOptions,
  type ConsumeOptions,
  type QueueItemHandler,
  type ErrorMode,
  type QueueItemContext,
  type MultiItemSerializer,
  type QueueSerializer,
} from './recipes/queue';
export { SharedCount, type VersionedCount, type SharedCountListener } from './recipes/shared';
export type { SharedCountEvents } from './recipes/shared/SharedCount';
export { SharedValue, type SharedBytes, type SharedValueEvents, type SharedValueListener, type VersionedValue } from './recipes/shared';
export {
  CuratorCache,
  CURATOR_CACHE_DEFAULTS,
  CacheTimeoutError,
  CuratorCacheBridge,
  CacheBridge,
  NodeCache,
  PathChildrenCache,
  type CuratorCacheOptions,
  type CuratorCacheEvents,
  type CacheWaitOptions,
  type CacheEventsOptions,
  type CuratorCacheEvent,
  type ChildData,
  type CacheFilter,
  type CacheFilterDecision,
  type CacheScope,
  type CuratorCacheBridgeOptions,
  type CacheBridgeOptions,
  type NodeCacheOptions,
  type NodeCacheEvents,
  type PathChildrenCacheOptions,
  type PathChildrenCacheEvents,
} from './recipes/cache';
export {
  PersistentNode,
  PERSISTENT_NODE_DEFAULTS,
  PersistentTtlNode,
  PERSISTENT_TTL_NODE_DEFAULTS,
  PersistentNodeTimeoutError,
  GroupMember,
  type PersistentNodeOptions,
  type PersistentNodeEvents,
  type PersistentNodeWaitOptions,
  type PersistentTtlNodeOptions,
  type GroupMemberOptions,
  type GroupMemberEvents,
} from './recipes/nodes';
export { DistributedBarrier, DistributedDoubleBarrier, BarrierTimeoutError, type BarrierWaitOptions } from './recipes/barriers';
export {
  DistributedAtomicValue,
  DistributedAtomicLong,
  DistributedAtomicInteger,
  ATOMIC_DEFAULTS,
  AtomicContentionError,
  AtomicValueCorruptError,
  type DistributedAtomicNumber,
  type AtomicBytes,
  type MakeValue,
  type AtomicValue,
  type AtomicStats,
  type DistributedAtomicOptions,
  type PromotedToLock,
  type AtomicOperationOptions,
} from './recipes/atomic';
export {
  ServiceDiscovery,
  createServiceInstance,
  localIpAddress,
  SERVICE_TYPES,
  UriSpec,
  JsonInstanceSerializer,
  JSON_INSTANCE_SERIALIZER_DEFAULTS,
  ServiceInstanceFormatError,
  type ServiceDiscoveryOptions,
  type ServiceDiscoveryWaitOptions,
  type ServiceInstance,
  type ServiceInstanceOptions,
  type ServicePayload,
  type ServiceType,
  type JsonValue,
  type UriSpecPart,
  type UriVariables,
  type UriSource,
  type JsonInstanceSerializerOptions,
  ServiceCache,
  ServiceProvider,
  RoundRobinStrategy,
  RandomStrategy,
  StickyStrategy,
  DOWN_INSTANCE_POLICY_DEFAULTS,
  type ServiceCacheEvents,
  type ServiceCacheStartOptions,
  type ServiceCacheChangesOptions,
  type ServiceCacheSource,
  type ServiceProviderOptions,
  type InstanceFilter,
  type ProviderStrategy,
  type DownInstancePolicy,
} from './recipes/discovery';
