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
import { rawFloorPeer } from '../peers/rawFloor';
import { REDIS_MUTEX_OPTIONS } from '../peers/redis';
import type { ContendedRun, LockPeer, PeerId } from '../peers/types';
import { ensembleNote, fmtNum, fmtRatio, judge, mdTable, memberColumn, notMeasured } from '../report';
import { median, medianEach, ratio } from '../stats';
import { runSizedRounds } from './sizedRounds';
import type { BenchContext, Goal, RatioBar, Scenario, ScenarioResult } from './types';

interface RunFigures {
  opsPerSec: number;
  packetsPerOp: number;
  /** The packets per acquisition at each member (an ensemble's), in the spread's order. */
  packetsPerOpByMember: number[];
  /** The busiest session's share of the acquisitions. */
  busiestShare: number;
  overlaps: number;
  /** This process's CPU time per acquisition, µs: the client's, for a library that runs here. */
  cpuPerOp: number;
}

interface Measured {
  run: ContendedRun;
  cpuUs: number;
}

/** Libraries whose sessions live in the bench's own process, so that its CPU time is their client's. */
const IN_PROCESS: ReadonlySet<PeerId> = new Set<PeerId>(['zk-recipes', 'zk-recipes-native', 'redis', 'floor-raw']);

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
  // Each library's first size is preceded by a longer warm-up: measured from a cold start, 2 s
  // at a time, zk-recipes' CPU per acquisition settles only after about 10 s of the loop (750,
  // 389, 301, 269, 263, then 234–249 µs), the raw floor's after about 6 s (356, 206, 184, 181,
  // then 165–186 µs). Rounds taken before that measure the JIT, not the client.
  const firstWarmupMs = quick ? 0 : Math.max(warmupMs, 12_000);
  const warmed = new Set<LockPeer>();
  const peers = [...ctx.peers, rawFloorPeer(ctx.spread, ctx.sessionTimeoutMs)];
  const { results, failed, failures, median: medianOf } = await runSizedRounds<LockPeer, Measured, RunFigures>(ctx, {
    name: 'contended',
    sizes,
    rounds,
    peers,
    label: (size) => `${size} sessions`,
    describe: (size, round) => `${size} sessions, round ${round + 1}/${rounds}, ${durationMs} ms`,
    sessions: (size) => size,
    prepare: async (peer, path, _size, round) => {
      if (round > 0) return;
      const ms = warmed.has(peer) ? warmupMs : firstWarmupMs;
      warmed.add(peer);
      if (ms > 0) await peer.contended(path, ms);
    },
    measure: async (peer, path) => {
      const cpu0 = process.cpuUsage();
      const r = await peer.contended(path, durationMs);
      const cpu = process.cpuUsage(cpu0);
      return { run: r, cpuUs: cpu.user + cpu.system };
    },
    check: (m) => check(m.run),
    figures: ({ value: { run: r, cpuUs }, packets, packetsByMember }) => {
      const total = r.counts.reduce((a, b) => a + b, 0);
      return {
        cpuPerOp: total > 0 ? cpuUs / total : Number.NaN,
        opsPerSec: (total / r.elapsedMs) * 1000,
        packetsPerOp: total > 0 ? packets / total : Number.NaN,
        packetsPerOpByMember: packetsByMember.map((p) => (total > 0 ? p / total : Number.NaN)),
        busiestShare: total > 0 ? Math.max(...r.counts) / total : Number.NaN,
        overlaps: r.violations + countOverlaps(r.holds),
      };
    },
  });

  const throughput = (size: number, id: PeerId) => medianOf(size, id, (x) => x.opsPerSec);
  const cpuOf = (size: number, id: PeerId) => medianOf(size, id, (x) => x.cpuPerOp);
  const byMember = memberColumn(ctx.members, 'server packets / acquisition');
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
        IN_PROCESS.has(peer.id) ? fmtNum(medianOf(size, peer.id, (x) => x.cpuPerOp)) : 'n/a (own process)',
        peer.usesZooKeeper ? fmtNum(median(list.map((x) => x.packetsPerOp))) : 'n/a (Redis)',
        list.length ? `${(median(list.map((x) => x.busiestShare)) * 100).toFixed(0)}% (fair: ${(100 / size).toFixed(0)}%)` : 'n/a',
        list.length ? (overlaps === 0 ? `none in ${list.length} run(s)` : `**${overlaps}**`) : 'n/a',
        peer.id === 'zk-recipes' ? '1.00×' : fmtRatio(ratio(zk, ops)),
        ...byMember.cell(peer.usesZooKeeper ? medianEach(list.map((x) => x.packetsPerOpByMember)) : []),
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
    sizes.includes(8)
      ? judge('contended client CPU per acquisition at 8 sessions ≤ 1.4 × the raw-socket floor', ratio(cpuOf(8, 'zk-recipes'), cpuOf(8, 'floor-raw')), 1.4, 'lower')
      : notMeasured('contended client CPU per acquisition at 8 sessions ≤ 1.4 × the raw-socket floor', '8 sessions not run'),
    sizes.includes(8)
      ? judge('contended throughput at 8 sessions ≥ 0.9 × the raw-socket floor', ratio(throughput(8, 'zk-recipes'), throughput(8, 'floor-raw')), 0.9, 'higher')
      : notMeasured('contended throughput at 8 sessions ≥ 0.9 × the raw-socket floor', '8 sessions not run'),
  ];
  const bars: RatioBar[] = sizes.flatMap((size): RatioBar[] => [
    { metric: `contended ${size} sessions`, versus: 'curator', ratio: ratio(throughput(size, 'zk-recipes'), throughput(size, 'curator')), better: 'higher', goal: size === 8 ? 2 : undefined },
    { metric: `contended ${size} sessions`, versus: 'kazoo', ratio: ratio(throughput(size, 'zk-recipes'), throughput(size, 'kazoo')), better: 'higher' },
    { metric: `contended ${size} sessions`, versus: 'zk-recipes-native', ratio: ratio(throughput(size, 'zk-recipes'), throughput(size, 'zk-recipes-native')), better: 'higher' },
  ]);
  const rawLine = sizes
    .map((size) => `${size} sessions: zk-recipes ÷ raw: throughput ${fmtRatio(ratio(throughput(size, 'zk-recipes'), throughput(size, 'floor-raw')))}, client CPU per acquisition ${fmtRatio(ratio(cpuOf(size, 'zk-recipes'), cpuOf(size, 'floor-raw')))}; Curator ÷ raw: throughput ${fmtRatio(ratio(throughput(size, 'curator'), throughput(size, 'floor-raw')))}`)
    .join('; ');
  const transportLine = sizes.map((size) => `${size} sessions ${fmtRatio(ratio(throughput(size, 'zk-recipes'), throughput(size, 'zk-recipes-native')))}`).join(', ');

  const markdown = [
    `## 2. Contended: throughput${ctx.headingSuffix}`,
    '',
    `Each of N sessions loops acquire → release on its own lock object for ${durationMs} ms (${rounds} round(s) per size, libraries interleaved; ${warmupMs > 0 ? `the first round of each size is preceded by an unmeasured warm-up: ${firstWarmupMs} ms for each library's first size, ${warmupMs} ms for the others, so that every library is measured at its steady state, JIT-compiled` : 'no warm-up'}). Throughput is acquisitions per second over the run (median of rounds, machine-dependent); server packets (zk_packets_received + zk_packets_sent, from \`srvr\`, around the run) are per acquisition. All sessions of a library live in one process, as they do for zk-recipes. The Redis reference retries a taken lock every ${REDIS_MUTEX_OPTIONS.retryInterval} ms (redis-semaphore's default \`retryInterval\`), so it is neither fair nor queue-based.${ensembleNote(ctx.members)}`,
    '',
    'Overlap check: in the holder process, a counter incremented right after acquire returns and decremented right before release (an entry that finds another holder is an overlap, and every overlap of critical sections produces one), plus a sweep here over the [start, end] timestamps each holder recorded inside its critical section on that process\'s one monotonic clock.',
    '',
    mdTable(['sessions', 'library', 'acquisitions / s (machine-dependent)', 'client CPU µs / acquisition (machine-dependent)', 'server packets / acquisition', 'busiest session\'s share', 'overlapping holds', 'zk-recipes ÷ this', ...byMember.header], rows, [2, 3, 4, 5, 7, 8]),
    '',
    `**Ratios (the claim, higher is better):** ${ratioLines.join('; ')}.`,
    '',
    `**Transports:** zk-recipes on the protocol transport ÷ on the native one: ${transportLine}.`,
    '',
    `**Against the raw-socket floor** (our own minimal client over \`node:net\`, the same requests in the same contended loop, the same sessions in this process): ${rawLine}. Client CPU is this process's user + system time over the run divided by the acquisitions.`,
  ].join('\n');
  return { markdown, goals, bars, failures };
}

export const scenario: Scenario = { name: 'contended', order: 2, title: 'Contended throughput', run };
