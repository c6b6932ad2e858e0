/** Barriers: DistributedBarrier and DistributedDoubleBarrier, Curator-compatible. */
export { DistributedBarrier } from './DistributedBarrier';
export { DistributedDoubleBarrier, READY_NODE } from './DistributedDoubleBarrier';
export { BarrierTimeoutError } from './errors';
export type { BarrierWaitOptions } from './waits';
