/**
 * What every library under test offers the scenarios. zk-recipes and the Redis lock run in this
 * process; Curator and kazoo run in driver processes of their own (bench/peers/remote.ts), one
 * process holding every session of its library, as zk-recipes does here.
 *
 * Times are microseconds on the clock of the process that holds the lock (one monotonic clock for
 * all of its sessions), so they can be compared with each other but not across libraries.
 */

export type PeerId = 'zk-recipes' | 'curator' | 'kazoo' | 'redis';

/** The libraries compared with zk-recipes, in table order. */
export const PEER_ORDER: readonly PeerId[] = ['zk-recipes', 'curator', 'kazoo', 'redis'];

export interface ContendedRun {
  /** Acquisitions per session. */
  counts: number[];
  /** From the common start to the end of the last loop. */
  elapsedMs: number;
  /** Critical sections entered while another was inside, counted by the holder process. */
  violations: number;
  /** Every critical section as [start, end] µs, for the orchestrator's own overlap check. */
  holds: Array<[number, number]>;
}

export interface HandoffRun {
  /** Per holder (index 0 is the first holder, the others are the waiters): when its acquire returned, µs. */
  acquiredUs: number[];
  /** Per holder: when it started to release, µs. */
  releasedUs: number[];
  /** Critical sections entered while another was inside, counted by the holder process. */
  violations: number;
}

export interface LockPeer {
  readonly id: PeerId;
  /** Name and version for tables: "Curator 5.4.0". */
  readonly label: string;
  /** Versions of everything this peer runs on, for the results' header. */
  readonly versions: Record<string, string>;
  /** Whether its traffic goes to the ZooKeeper server (so `mntr` packet counts mean something). */
  readonly usesZooKeeper: boolean;
  /** Opens `sessions` sessions (closing any open ones). */
  open(sessions: number): Promise<void>;
  /** Closes every open session. */
  closeSessions(): Promise<void>;
  /** `iterations` acquire+release pairs, one after another, on session 0: the µs of each pair. */
  uncontended(path: string, iterations: number): Promise<number[]>;
  /** One loop per open session, each acquiring and releasing its own lock object until `durationMs` has passed. */
  contended(path: string, durationMs: number): Promise<ContendedRun>;
  /**
   * Session 0 takes the lock, then `waiters` contenders (each its own lock object) start waiting,
   * spread round-robin over the open sessions. Resolves once every waiter has started; the
   * scenario waits for their watches on the server before `handoffRun`.
   */
  handoffQueue?(path: string, waiters: number): Promise<void>;
  /** Releases the first holder and resolves once every waiter has held and released the lock. */
  handoffRun?(): Promise<HandoffRun>;
  /** Ends the peer (its process, for remote peers). */
  shutdown(): Promise<void>;
}

/** A library that could not take part, and how to install it. */
export interface SkippedPeer {
  readonly id: PeerId;
  readonly reason: string;
}
