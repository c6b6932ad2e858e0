/**
 * The measuring loop the size-by-size scenarios share (contended, rwlock, queue): for each size,
 * `rounds` rounds, the libraries in an order that rotates each round; each run opens its
 * sessions, prepares (a warm-up in the first round), waits for a quiet server, measures, checks
 * what it measured, and closes its sessions. A library that fails at a size is not run again at
 * that size. Not a scenario itself: it exports no `scenario`.
 */
import type { LockPeer, PeerId } from '../peers/types';
import type { Measured } from '../server';
import { median, rotate } from '../stats';
import type { BenchContext } from './types';

export interface SizedRoundsSpec<P extends LockPeer, R, F> {
  /** Scenario name, for the log. */
  readonly name: string;
  readonly sizes: readonly number[];
  readonly rounds: number;
  readonly peers: readonly P[];
  /** How a size reads in failures: "8 sessions", "4 × 4". */
  label(size: number): string;
  /** The log line's detail for a run: "8 sessions, round 1/3, 5000 ms". */
  describe(size: number, round: number): string;
  /** Sessions to open for a run at `size`. */
  sessions(size: number): number;
  /** Anything before the measured part (a warm-up in the first round, set-up); unmeasured. */
  prepare(peer: P, path: string, size: number, round: number): Promise<void>;
  measure(peer: P, path: string, size: number): Promise<R>;
  /** A correctness problem in a run, which fails that library at that size; undefined when none. */
  check(run: R, peer: P, size: number): string | undefined;
  /** What the table takes from a run. */
  figures(measured: Measured<R>, size: number): F;
}

export interface SizedRoundsResult<F> {
  /** Figures per run, by `${size}/${peer id}`. */
  readonly results: Map<string, F[]>;
  /** `${size}/${peer id}` of the libraries that failed at a size. */
  readonly failed: Set<string>;
  readonly failures: string[];
  /** The median of `pick` over a library's runs at a size; NaN when it has none or failed. */
  median(size: number, id: PeerId, pick: (figures: F) => number): number;
}

export async function runSizedRounds<P extends LockPeer, R, F>(ctx: BenchContext, spec: SizedRoundsSpec<P, R, F>): Promise<SizedRoundsResult<F>> {
  const results = new Map<string, F[]>();
  const failed = new Set<string>();
  const failures: string[] = [];
  for (const size of spec.sizes) {
    for (let round = 0; round < spec.rounds; round++) {
      for (const peer of rotate(spec.peers, round + size)) {
        const key = `${size}/${peer.id}`;
        if (failed.has(key)) continue;
        const where = `${spec.name}, ${peer.label}, ${spec.label(size)}`;
        ctx.log(`${spec.name}: ${peer.label}, ${spec.describe(size, round)}`);
        try {
          await peer.open(spec.sessions(size));
          const path = `${ctx.root}/${spec.name}/${size}/${peer.id}-${round}`;
          await spec.prepare(peer, path, size, round);
          if (!(await ctx.probe.waitQuiet())) ctx.log('warning: the server did not go quiet before this measurement');
          const m = await ctx.probe.measure(() => spec.measure(peer, path, size));
          const problem = spec.check(m.value, peer, size);
          if (problem) {
            failures.push(`${where}: ${problem}`);
            failed.add(key);
          }
          const list = results.get(key) ?? [];
          list.push(spec.figures(m, size));
          results.set(key, list);
        } catch (err) {
          failed.add(key);
          failures.push(`${where}: ${String(err)}`);
        } finally {
          await peer.closeSessions().catch(() => undefined);
        }
      }
    }
  }
  return {
    results,
    failed,
    failures,
    median(size, id, pick) {
      const list = results.get(`${size}/${id}`);
      return list && list.length > 0 && !failed.has(`${size}/${id}`) ? median(list.map(pick)) : Number.NaN;
    },
  };
}
