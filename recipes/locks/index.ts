export { InterProcessMutex } from './InterProcessMutex';
export type { InterProcessLock, AcquireOptions } from './InterProcessLock';
export { LockTimeoutError, LockLostError, NotLockOwnerError, type LockLostReason } from './errors';
export { SimpleLease, type Lease } from './Lease';
export { LockMonitor } from './LockMonitor';
export { LockInternals, standardDriver, type LockDriver, type LockDecision, type Acquisition, type AttemptOptions } from './LockInternals';
export { Revoker } from './Revoker';
export { REVOKE_MESSAGE } from './LockMonitor';
export { sequenceOf, sortLockNodes } from './sequence';
export {
  InterProcessReadWriteLock,
  LockUpgradeError,
  readLockDriver,
  writeLockDriver,
  READ_LOCK_NAME,
  WRITE_LOCK_NAME,
  type InterProcessReadWriteLockOptions,
} from './InterProcessReadWriteLock';
export {
  InterProcessSemaphoreV2,
  SEMAPHORE_LOCKS_PARENT,
  SEMAPHORE_LEASES_PARENT,
  SEMAPHORE_LEASE_NAME,
  type SemaphoreOptions,
  type SemaphoreLimit,
  type SemaphoreAcquireOptions,
} from './InterProcessSemaphoreV2';
export { InterProcessSemaphoreMutex } from './InterProcessSemaphoreMutex';
export { InterProcessMultiLock, MultiLease } from './InterProcessMultiLock';
