/**
 * What every library under test offers the scenarios. zk-recipes and the Redis lock run in this
 * process; Curator and kazoo run in driver processes of their own (bench/peers/remote.ts), one
 * process holding every session of its library, as zk-recipes does here.
 *
 * Times are microseconds on the clock of the process that holds the lock (one monotonic clock for
 * all of its sessions), so they can be compared with each other but not across libraries.
 */

/**
 * 'zk-recipes' runs on the protocol transport (the default), 'zk-recipes-native' on the native
 * binding; 'floor-raw' is the raw-socket floor client (peers/rawFloor.ts), a reference rather than
 * a library, so it is not among PEER_ORDER's.
 */
export type PeerId = 'zk-recipes' | 'zk-recipes-native' | 'curator' | 'kazoo' | 'redis' | 'floor-raw';

/** The libraries compared with zk-recipes, in table order. */
export const PEER_ORDER: readonly PeerId[] = ['zk-recipes', 'zk-recipes-native', 'curator', 'kazoo', 'redis'];

/**
 * Where a library's sessions connect: session i to `spread[i % spread.length]`. One entry on a
 * standalone server; on an ensemble one member per entry (see bench/deployment.ts).
 */
export type Spread = readonly string[];

/** The connect string of session `i`. */
export function connectStringOf(spread: Spread, i: number): string {
  return spread[i % spread.length];
}

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

export interface RwLockRun {
  /** Read acquisitions per session. */
  reads: number[];
  /** Write acquisitions per session. */
  writes: number[];
  /** From the common start to the end of the last loop. */
  elapsedMs: number;
  /**
   * Critical sections entered in conflict, counted by the holder process: a writer entering while
   * anyone holds, or a reader entering while a writer holds.
   */
  violations: number;
  /** The most readers the holder process saw inside at once (1 means reads never overlapped). */
  maxReaders: number;
  /** Every critical section as [start µs, end µs, kind], kind 0 for a read and 1 for a write. */
  holds: Array<[number, number, number]>;
  /** What the driver had to know or do about this library's lock, for the results. */
  note?: string;
}

export interface LeaderFailover {
  /** From the start of the leader's close to the next leader's isLeader callback, µs. */
  failoverUs: number;
  /**
   * Participants that claim leadership once the next leader's callback has run and the old
   * leader's close has returned (the closed one included): must be 1.
   */
  leaders: number;
  /** isLeader callbacks during the failover: must be 1. */
  elections: number;
  /** isLeader callbacks that found another open participant still leading: must be 0. */
  violations: number;
}

export interface QueueRun {
  /** From the first put's start to the moment the last of the items was consumed. */
  elapsedMs: number;
  /** Per consumer, in the order it consumed them: the items as [producer, sequence] pairs. */
  received: Array<Array<[number, number]>>;
}

export interface CacheLoad {
  /** From the cache's start to its initialized event, on the process's clock. */
  elapsedMs: number;
  /** Nodes the cache held then. */
  nodes: number;
}

export interface CacheEventsRun {
  /** From `cacheExpect` to the last expected change event, on the process's clock. */
  elapsedMs: number;
  /** Change events counted. */
  events: number;
}

export interface DiscoveryWarm {
  /** From the provider's start (its ServiceCache's) to its return, the instances loaded, on the process's clock. */
  elapsedMs: number;
  /** Instances the provider could pick from then (`getAllInstances()`). */
  instances: number;
}

export interface DiscoveryPicks {
  /** `getInstance()` calls in the timed loop. */
  picks: number;
  /** The timed loop's length, on the process's clock. */
  elapsedMs: number;
  /** Picks that returned no instance (timed loop and check together): must be 0. */
  nulls: number;
  /** The distinct ids picked by the check after the timed loop. */
  ids: string[];
}

/** Items per producer of a queue run: `items` spread evenly, the first producers taking the remainder. */
export function itemsPerProducer(items: number, producers: number): number[] {
  return Array.from({ length: producers }, (_, k) => Math.floor(items / producers) + (k < items % producers ? 1 : 0));
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
   * spread round-robin over the open sessions; each holds the lock `holdMs` ms (a timer) once it
   * has it, then releases. Resolves once every waiter has started; the scenario waits for their
   * watches on the server before `handoffRun`.
   */
  handoffQueue?(path: string, waiters: number, holdMs: number): Promise<void>;
  /** Releases the first holder and resolves once every waiter has held and released the lock. */
  handoffRun?(): Promise<HandoffRun>;
  /**
   * Read-write lock: one loop per open session, each with its own read and write lock objects on
   * `path`, for `durationMs`; each turn takes the write lock with probability `writePercent`/100
   * (the session's own seeded xorshift32, see peers/rng.ts, the same sequence in every library),
   * else the read lock, then releases it.
   */
  rwlock?(path: string, durationMs: number, writePercent: number): Promise<RwLockRun>;
  /**
   * Leader election: every open session without a participant on `path` gets a new one (a latch,
   * or for kazoo an Election); resolves once every participant has its node and exactly one leads.
   */
  leaderStart?(path: string): Promise<void>;
  /** Closes the leader and resolves once the next one's isLeader callback has run. */
  leaderFailover?(): Promise<LeaderFailover>;
  /** Closes every participant. */
  leaderStop?(): Promise<void>;
  /**
   * Queue: sessions 0 … producers−1 get a producer each, the next `consumers` sessions a consumer
   * each, on `path`; the consumers start listening (kazoo's, which poll, wait for queueRun).
   * `items` in total, spread evenly over the producers, each item naming its producer and its
   * sequence within that producer.
   */
  queuePrepare?(path: string, producers: number, consumers: number, items: number): Promise<void>;
  /**
   * Every producer puts its items; resolves once as many items as were put have been consumed, or
   * once nothing has been consumed for 10 s (items were lost), then stops the consumers.
   */
  queueRun?(): Promise<QueueRun>;
  /**
   * Cache: starts the library's CuratorCache on `path` on session 0 and resolves once it is
   * initialized (its first load is done), with the time that took.
   */
  cacheLoad?(path: string): Promise<CacheLoad>;
  /** Starts counting the cache's change events (NODE_CHANGED) from now; `cacheAwait` resolves at `changes`. */
  cacheExpect?(changes: number): Promise<void>;
  /** Resolves once the expected change events have come, or with what came within `timeoutMs`. */
  cacheAwait?(timeoutMs: number): Promise<CacheEventsRun>;
  /** Closes the cache. */
  cacheStop?(): Promise<void>;
  /**
   * Service discovery: on session 0, a ServiceDiscovery on `basePath` registers `count` DYNAMIC
   * instances of service `name`, one after another (each built before its timing starts): the µs
   * of each `registerService`. They stay registered until `discoveryStop`.
   */
  discoveryRegister?(basePath: string, name: string, count: number): Promise<number[]>;
  /**
   * Starts a ServiceProvider (round-robin) of service `name` under `basePath` on session 0 (a
   * ServiceDiscovery of its own, registering nothing) and resolves once its start returns, its
   * ServiceCache loaded.
   */
  discoveryWarm?(basePath: string, name: string): Promise<DiscoveryWarm>;
  /**
   * Calls the warmed provider's `getInstance()` in a tight loop for `durationMs`, then `check`
   * more times, collecting the ids those return.
   */
  discoveryPick?(durationMs: number, check: number): Promise<DiscoveryPicks>;
  /** Closes the provider and the discoveries (unregistering what `discoveryRegister` registered). */
  discoveryStop?(): Promise<void>;
  /** Ends the peer (its process, for remote peers). */
  shutdown(): Promise<void>;
}

/** A library that could not take part, and how to install it. */
export interface SkippedPeer {
  readonly id: PeerId;
  readonly reason: string;
}
