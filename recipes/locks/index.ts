export { InterProcessMutex } from './InterProcessMutex';
export type { InterProcessLock, AcquireOptions } from './InterProcessLock';
export { LockTimeoutError, LockLostError, NotLockOwnerError, type LockLostReason } from './errors';
export { SimpleLease, type Lease } from './Lease';
export { LockMonitor } from './LockMonitor';
export { LockInternals, standardDriver, type LockDriver, type LockDecision, type Acquisition, type AttemptOptions } from './LockInternals';
export { Revoker } from './Revoker';
export { REVOKE_MESSAGE } from './LockMonitor';
export { sequenceOf, sortLockNodes } from './sequence';
