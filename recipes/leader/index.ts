/** Leader election: LeaderLatch, LeaderSelector, and observeLeader for those who only watch. */
export {
  LeaderLatch,
  LEADER_LATCH_DEFAULTS,
  type LeaderLatchOptions,
  type LeaderLatchCloseMode,
  type LeaderLatchAwaitOptions,
  type LeaderLatchEvents,
} from './LeaderLatch';
export { LeaderSelector, LEADER_SELECTOR_DEFAULTS, type LeaderSelectorEvents, type LeaderSelectorOptions, type TakeLeadership } from './LeaderSelector';
export { observeLeader, type LeaderInfo, type ObserveLeaderOptions } from './observeLeader';
export { LEADER_LATCH_NAME, LEADER_SELECTOR_NAME, NO_LEADER, readLeader, readParticipants, type Participant } from './participants';
export { LeadershipInterruptedError, LeaderLatchClosedError, LeaderTimeoutError, type LeadershipInterruptReason } from './errors';
