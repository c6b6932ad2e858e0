/**
 * `contended`: mutex throughput with N sessions (--sessions, default 2, 8, 32), each looping
 * acquire/release on its own lock object for a fixed duration. Every run is checked for
 * overlapping holds, twice:
 *
 * 1. In the process that holds the lock (zk-recipes and Redis here, Curator and kazoo in their
 *    drivers, every session of a library in one process): a holder increments a shared counter
 *    right after its acquire returns and decrements it right before it releases. The span between
 *    is its critical section; an increment that finds the counter already at 1 means two
 *    critical sections overlap, and any overlap produces one. The count must be 0.
 * 2. Here, from the sections' [start, end] timestamps the holder process recorded inside them, on
 *    its one monotonic clock: sorted by start, each must begin after every earlier one ended, and
 *    their number must equal the acquisitions counted.
 */
import { REDIS_MUTEX_OPTIONS } from '../peers/redis';
import type { ContendedRun, LockPeer, PeerId } from '../peers/types';
import { fmtNum, fmtRatio, judge, mdTable, notMeasured } from '../report';
import { median, ratio } from '../stats';
import { runSizedRounds } from './sizedRounds';
import type { BenchContext, Goal, RatioBar, Scenario, ScenarioResult } from './types';

interface RunFigures {
  opsPerSec: number;
  packetsPerOp: number;
  /** The busiest session's share of the acquisitions. */
  busiestShare: number;
  overlaps: number;
}

/** Overlapping [start, end] sections, counted by sweeping them in start order. */
export function countOverlaps(sections: ReadonlyArray<readonly [number, number]>): number {
  const sorted = [...sections].sort((a, b) => a[0] - b[0]);
  let overlaps = 0;
  let lastEnd = -Infinity;
  for (const [start, end] of sorted) {
    if (start < lastEnd) overlaps++;
    lastEnd = Math.max(lastEnd, end);
  }
  return overlaps;
}

function check(run: ContendedRun): string | undefined {
  const total = run.counts.reduce((a, b) => a + b, 0);
  if (run.violations !== 0) return `${run.violations} overlapping hold(s) counted by the holder process`;
  if (run.holds.length !== total) return `${run.holds.length} recorded holds for ${total} acquisitions`;
  const overlaps = countOverlaps(run.holds);
  if (overlaps !== 0) return `${overlaps} overlapping hold(s) in the recorded timestamps`;
  return undefined;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const { quick } = ctx.options;
  const sizes = ctx.options.sessions;
  const rounds = ctx.options.rounds ?? (quick ? 1 : 3);
  const durationMs = ctx.options.durationMs ?? (quick ? 300 : 5_000);
  const warmupMs = quick ? 0 : Math.min(1_000, durationMs);
  const peers = ctx.peers;
  const { results, failed, failures, median: medianOf } = await runSizedRounds<LockPeer, ContendedRun, RunFigures>(ctx, {
    name: 'contended',
    sizes,
    rounds,
    peers,
    label: (size) => `${size} sessions`,
    describe: (size, round) => `${size} sessions, round ${round + 1}/${rounds}, ${durationMs} ms`,
    sessions: (size) => size,
    prepare: async (peer, path, _size, round) => {
      if (round === 0 && warmupMs > 0) await peer.contended(path, warmupMs);
    },
    measure: (peer, path) => peer.contended(path, durationMs),
    check: (r) => check(r),
    figures: ({ value: r, packets }) => {
      const total = r.counts.reduce((a, b) => a + b, 0);
      return {
        opsPerSec: (total / r.elapsedMs) * 1000,
        packetsPerOp: total > 0 ? packets / total : Number.NaN,
        busiestShare: total > 0 ? Math.max(...r.counts) / total : Number.NaN,
        overlaps: r.violations + countOverlaps(r.holds),
      };
    },
  });

  const throughput = (size: number, id: PeerId) => medianOf(size, id, (x) => x.opsPerSec);
  const rows: string[][] = [];
  for (const size of sizes) {
    const zk = throughput(size, 'zk-recipes');
    for (const peer of peers) {
      const list = results.get(`${size}/${peer.id}`) ?? [];
      const ops = throughput(size, peer.id);
      const overlaps = list.reduce((a, x) => a + x.overlaps, 0);
      rows.push([
        String(size),
        peer.label + (failed.has(`${size}/${peer.id}`) ? ' (failed)' : ''),
        fmtNum(ops),
        peer.usesZooKeeper ? fmtNum(median(list.map((x) => x.packetsPerOp))) : 'n/a (Redis)',
        list.length ? `${(median(list.map((x) => x.busiestShare)) * 100).toFixed(0)}% (fair: ${(100 / size).toFixed(0)}%)` : 'n/a',
        list.length ? (overlaps === 0 ? `none in ${list.length} run(s)` : `**${overlaps}**`) : 'n/a',
        peer.id === 'zk-recipes' ? '1.00×' : fmtRatio(ratio(zk, ops)),
      ]);
    }
  }

  const ratioLines = sizes.map(
    (size) =>
      `${size} sessions: zk-recipes ÷ Curator ${fmtRatio(ratio(throughput(size, 'zk-recipes'), throughput(size, 'curator')))}, zk-recipes ÷ kazoo ${fmtRatio(ratio(throughput(size, 'zk-recipes'), throughput(size, 'kazoo')))}`,
  );
  const goalText = 'contended throughput at 8 sessions ≥ 2 × Curator';
  const has = (id: string) => peers.some((p: LockPeer) => p.id === id);
  const goals: Goal[] = [
    !sizes.includes(8)
      ? notMeasured(goalText, '8 sessions not run')
      : !has('curator')
        ? notMeasured(goalText, 'Curator skipped')
        : judge(goalText, ratio(throughput(8, 'zk-recipes'), throughput(8, 'curator')), 2, 'higher'),
  ];
  const bars: RatioBar[] = sizes.flatMap((size): RatioBar[] => [
    { metric: `contended ${size} sessions`, versus: 'curator', ratio: ratio(throughput(size, 'zk-recipes'), throughput(size, 'curator')), better: 'higher', goal: size === 8 ? 2 : undefined },
    { metric: `contended ${size} sessions`, versus: 'kazoo', ratio: ratio(throughput(size, 'zk-recipes'), throughput(size, 'kazoo')), better: 'higher' },
    { metric: `contended ${size} sessions`, versus: 'zk-recipes-native', ratio: ratio(throughput(size, 'zk-recipes'), throughput(size, 'zk-recipes-native')), better: 'higher' },
  ]);
  const transportLine = sizes.map((size) => `${size} sessions ${fmtRatio(ratio(throughput(size, 'zk-recipes'), throughput(size, 'zk-recipes-native')))}`).join(', ');

  const markdown = [
    '## 2. Contended: throughput',
    '',
    `Each of N sessions loops acquire → release on its own lock object for ${durationMs} ms (${rounds} round(s) per size, libraries interleaved; ${warmupMs > 0 ? `the first round of each size is preceded by an unmeasured ${warmupMs} ms warm-up` : 'no warm-up'}). Throughput is acquisitions per second over the run (median of rounds, machine-dependent); server packets (zk_packets_received + zk_packets_sent, from \`srvr\`, around the run) are per acquisition. All sessions of a library live in one process, as they do for zk-recipes. The Redis reference retries a taken lock every ${REDIS_MUTEX_OPTIONS.retryInterval} ms (redis-semaphore's default \`retryInterval\`), so it is neither fair nor queue-based.`,
    '',
    'Overlap check: in the holder process, a counter incremented right after acquire returns and decremented right before release (an entry that finds another holder is an overlap, and every overlap of critical sections produces one), plus a sweep here over the [start, end] timestamps each holder recorded inside its critical section on that process\'s one monotonic clock.',
    '',
    mdTable(['sessions', 'library', 'acquisitions / s (machine-dependent)', 'server packets / acquisition', 'busiest session\'s share', 'overlapping holds', 'zk-recipes ÷ this'], rows, [2, 3, 4, 6]),
    '',
    `**Ratios (the claim, higher is better):** ${ratioLines.join('; ')}.`,
    '',
    `**Transports:** zk-recipes on the protocol transport ÷ on the native one: ${transportLine}.`,
  ].join('\n');
  return { markdown, goals, bars, failures };
}

export const scenario: Scenario = { name: 'contended', order: 2, title: 'Contended throughput', run };
