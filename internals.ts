// The declarations use Node's types (Buffer, node:events): this reference brings them in for a
// project whose tsconfig lists no `types` (the default from TypeScript 6 on).
/// <reference types="node" preserve="true" />
/**
 * zk-recipes/internals: the machinery under the recipes, for the operator CLI, the benchmarks and
 * interop tests: lock internals and drivers, the queue consumer engine, how recipes name and encode
 * their nodes. No stability promise: any release may change it. Applications use `zk-recipes`.
 *
 * @packageDocumentation
 */
export { PROTECTED_PREFIX, isProtectedName, stripProtection, protectedName } from './src/client/protection';
export {
  SimpleLease,
  LockMonitor,
  LockInternals,
  standardDriver,
  REVOKE_MESSAGE,
  sequenceOf,
  sortLockNodes,
  readLockDriver,
  writeLockDriver,
  READ_LOCK_NAME,
  WRITE_LOCK_NAME,
  SEMAPHORE_LOCKS_PARENT,
  SEMAPHORE_LEASES_PARENT,
  SEMAPHORE_LEASE_NAME,
  type LockDriver,
  type LockDecision,
  type Acquisition,
  type AttemptOptions,
} from './recipes/locks';
export { LEADER_LATCH_NAME, LEADER_SELECTOR_NAME, NO_LEADER, readLeader, readParticipants } from './recipes/leader';
export {
  QueueConsumerEngine,
  CURATOR_ITEM_FORMAT_VERSION,
  decodeNode,
  encodeNode,
  isMultiItemSerializer,
  DELAY_ORDER,
  FIFO_ORDER,
  ID_ORDER,
  PRIORITY_ORDER,
  QUEUE_ITEM_NAME,
  SIMPLE_QUEUE_ITEM_NAME,
  delayItemName,
  epochOf,
  epochToString,
  fixId,
  idItemName,
  parseId,
  priorityItemName,
  priorityToString,
  type NodeOutcome,
  type NodeSink,
  type ClaimedNode,
  type EngineSettings,
} from './recipes/queue';
export { encodeCount, decodeCount } from './recipes/shared';
export { QueueBase, type QueueOrder } from './recipes/queue';
export { READY_NODE } from './recipes/barriers';
export { DistributedAtomicNumber, INT_CODEC, LONG_CODEC, encodeInt, decodeInt, encodeLong, decodeLong, type NumberCodec } from './recipes/atomic';
// CuratorCache's strategy seam: where its change notifications come from.
export { OneShotTreeWatcher, PersistentTreeWatcher, type TreeWatcher, type TreeWatcherSink, type TreeWatcherFactory } from './recipes/cache';
export type { CreatedAndListed } from './src/client/ZkClient';
