// The declarations use Node's types (Buffer, node:events): this reference brings them in for a
// project whose tsconfig lists no `types` (the default from TypeScript 6 on).
/// <reference types="node" preserve="true" />
/**
 * zk-recipes: Apache Curator's ZooKeeper recipes for Node.js.
 *
 * The public API, listed name by name: what the recipes are built from (lock internals and drivers,
 * the queue consumer engine, node naming and encoding) stays out, and is in `zk-recipes/internals`
 * for the CLI, the benchmarks and interop tests. `etc/zk-recipes.api.md` is the report of this list:
 * `npm run api` updates it when the public surface changes on purpose.
 *
 * @packageDocumentation
 */
export * from './src';
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
  QueueBase,
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
  type QueueOrder,
} from './recipes/queue';
export { SharedCount, type VersionedCount, type SharedCountListener } from './recipes/shared';
export type { SharedCountEvents } from './recipes/shared/SharedCount';
// These families' index files list their public names only.
export * from './recipes/cache';
export * from './recipes/nodes';
export * from './recipes/barriers';
export * from './recipes/atomic';
export * from './recipes/discovery';
