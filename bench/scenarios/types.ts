/**
 * A scenario is one file in bench/scenarios/ exporting `scenario: Scenario`; bench/scenarios/index.ts
 * finds it, and `npm run bench -- <name>` runs it. It measures every library under the same
 * conditions (same server, same session counts, interleaved rounds) and returns its table, its
 * goals and the ratios for the chart.
 */
import type { ServerProbe } from '../server';
import type { LockPeer, PeerId, SkippedPeer, Spread } from '../peers/types';

export interface BenchOptions {
  quick: boolean;
  /** Session counts of `contended` (--sessions). */
  sessions: number[];
  /** Waiter counts of `handoff` (--waiters). */
  waiters: number[];
  /** Sessions the hand-off waiters are spread over (--handoff-sessions). */
  handoffSessions: number;
  /** How long each hand-off waiter holds the lock before it releases, in ms (--hold-ms; default 0). */
  holdMs: number;
  /** Rounds per size (--rounds); each scenario has its own default. */
  rounds: number | undefined;
  /** `contended` and `rwlock` run length (--duration ms). */
  durationMs: number | undefined;
  /** `uncontended` pairs per round (--iterations). */
  iterations: number | undefined;
  /** Session counts of `rwlock` (--rw-sessions). */
  rwSessions: number[];
  /** `leader` participants, each in its own session (--participants). */
  participants: number;
  /** `queue` sizes: N producers × N consumers for each N (--queue-sizes). */
  queueSizes: number[];
  /** `queue` items per run, whatever the size (--queue-items); else the scenario's default. */
  queueItems: number | undefined;
  /** `cache` tree size (--cache-nodes); else the scenario's default. */
  cacheNodes: number | undefined;
  /** `discovery` instances registered per round and warmed (--discovery-instances); else the scenario's default. */
  discoveryInstances: number | undefined;
}

export interface BenchContext {
  /** Every server, comma-separated: for set-up clients, not for a library's measured sessions. */
  readonly connectString: string;
  /** Where session i of every library connects: `connectStringOf(spread, i)`; one entry on one server. */
  readonly spread: Spread;
  /** Appended to the scenario's heading: '' on one server, ', 3-node ensemble' on an ensemble. */
  readonly headingSuffix: string;
  /**
   * On an ensemble, who the spread's entries are ("s1 follower / s2 follower / s3 leader"): the
   * order of `Measured.packetsByMember`. Undefined on one server.
   */
  readonly members: string | undefined;
  readonly probe: ServerProbe;
  /** The libraries that run here, zk-recipes first. */
  readonly peers: readonly LockPeer[];
  readonly skipped: readonly SkippedPeer[];
  readonly options: BenchOptions;
  readonly sessionTimeoutMs: number;
  /** A fresh root path for this bench run's nodes. */
  readonly root: string;
  log(message: string): void;
}

/** 'not judged': a --quick run, whose figures mean nothing. */
export type GoalStatus = 'met' | 'missed' | 'not measured' | 'not judged';

export interface Goal {
  /** "uncontended p50 ≤ 0.75 × Curator". */
  goal: string;
  /** The figure it was judged on: "0.62 ×". */
  figure: string;
  status: GoalStatus;
}

/** One bar of the chart: zk-recipes' figure divided by another library's. */
export interface RatioBar {
  /** The measurement: "uncontended p50", "contended 8 sessions". */
  metric: string;
  /** 'curator' or 'kazoo'. */
  versus: PeerId;
  ratio: number;
  /** Whether a ratio under 1 ('lower') or over 1 ('higher') favours zk-recipes. */
  better: 'lower' | 'higher';
  /** The goal's bound on this ratio, when there is one. */
  goal?: number;
}

export interface ScenarioResult {
  /** Markdown: a heading, the table(s), the ratios and notes. */
  markdown: string;
  goals: Goal[];
  bars: RatioBar[];
  /** Correctness failures (overlapping holds, errors): they make the bench exit non-zero. */
  failures: string[];
}

export interface Scenario {
  /** The suite name on the command line. */
  readonly name: string;
  /** Position in a full run and in the results. */
  readonly order: number;
  readonly title: string;
  run(ctx: BenchContext): Promise<ScenarioResult>;
}
