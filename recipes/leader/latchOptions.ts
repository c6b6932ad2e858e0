/** The options and events of a LeaderLatch. */

/**
 * What `close()` tells the listeners of a leading latch: 'silent' (Curator's SILENT, the default)
 * says nothing; 'notifyLeader' (NOTIFY_LEADER) emits `notLeader`.
 */
export type LeaderLatchCloseMode = 'silent' | 'notifyLeader';

/** Options of a LeaderLatch. Defaults are in `LEADER_LATCH_DEFAULTS`. */
export interface LeaderLatchOptions {
  /** This participant's id, written as UTF-8 into its node: what `getLeader()` and `getParticipants()` report. */
  id?: string;
  /** Whether `close()` emits `notLeader` from a leading latch. */
  closeMode?: LeaderLatchCloseMode;
}

/** The defaults of LeaderLatchOptions, frozen. */
export const LEADER_LATCH_DEFAULTS = Object.freeze({
  id: '',
  closeMode: 'silent' as LeaderLatchCloseMode,
});

/** Options of `LeaderLatch.await`. */
export interface LeaderLatchAwaitOptions {
  /** Reject with LeaderTimeoutError after this long; undefined waits as long as it takes. */
  timeoutMs?: number;
  /** Abort the wait: `await` rejects with `signal.reason`. */
  signal?: AbortSignal;
}

/** The events of a LeaderLatch. */
export interface LeaderLatchEvents {
  /** It gained leadership. */
  isLeader: [];
  /** It lost leadership. */
  notLeader: [];
  /** A step of the election failed (it is tried again after a back-off): a refused create, a missing permission. Emitted only when someone listens. */
  error: [err: unknown];
}
