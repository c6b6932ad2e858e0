/**
 * `rwlock`: read-write lock throughput with N sessions (--rw-sessions, default 8), each looping for
 * a fixed duration: pick read (90 %) or write (10 %) with the session's own seeded xorshift32 (the
 * same sequence of choices in every library, peers/rng.ts), acquire that lock, release it. Each
 * session has its own lock objects. Checked for conflicting holds twice, as `contended` checks its
 * mutex:
 *
 * 1. In the holder process: counters of readers and writers inside, incremented right after an
 *    acquire returns and decremented right before the release. A writer that enters while anyone
 *    is inside, or a reader that enters while a writer is, is a conflict; any overlap of a writer's
 *    critical section with another section produces one. Readers inside together are fine.
 * 2. Here, from the sections' [start, end, kind] timestamps (one monotonic clock per library's
 *    process): sorted by start, a write must begin after every earlier section ended, a read after
 *    every earlier write ended; and their number must equal the acquisitions counted.
 */
import type { LockPeer, PeerId, RwLockRun } from '../peers/types';
import { fmtNum, fmtRatio, mdTable } from '../report';
import { median, ratio } from '../stats';
import { runSizedRounds } from './sizedRounds';
import type { BenchContext, RatioBar, Scenario, ScenarioResult } from './types';

/** The share of turns that write, in percent. */
export const WRITE_PERCENT = 10;

interface RunFigures {
  opsPerSec: number;
  packetsPerOp: number;
  writeShare: number;
  maxReaders: number;
  conflicts: number;
}

/**
 * Conflicting [start, end, kind] sections (kind 1 a write, 0 a read): a write overlapping any
 * other section, or a read overlapping a write. Swept in start order; a pair of overlapping
 * sections counts once, at the later-starting one.
 */
export function countRwConflicts(sections: ReadonlyArray<readonly [number, number, number]>): number {
  const sorted = [...sections].sort((a, b) => a[0] - b[0]);
  let conflicts = 0;
  let lastEnd = -Infinity;
  let lastWriteEnd = -Infinity;
  for (const [start, end, kind] of sorted) {
    const write = kind === 1;
    if (start < (write ? lastEnd : lastWriteEnd)) conflicts++;
    lastEnd = Math.max(lastEnd, end);
    if (write) lastWriteEnd = Math.max(lastWriteEnd, end);
  }
  return conflicts;
}

function check(run: RwLockRun): string | undefined {
  const total = run.reads.reduce((a, b) => a + b, 0) + run.writes.reduce((a, b) => a + b, 0);
  if (run.violations !== 0) return `${run.violations} conflicting hold(s) counted by the holder process`;
  if (run.holds.length !== total) return `${run.holds.length} recorded holds for ${total} acquisitions`;
  const conflicts = countRwConflicts(run.holds);
  if (conflicts !== 0) return `${conflicts} conflicting hold(s) in the recorded timestamps`;
  return undefined;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const { quick } = ctx.options;
  const sizes = ctx.options.rwSessions;
  const rounds = ctx.options.rounds ?? (quick ? 1 : 3);
  const durationMs = ctx.options.durationMs ?? (quick ? 300 : 5_000);
  const warmupMs = quick ? 0 : Math.min(1_000, durationMs);
  type RwPeer = LockPeer & Required<Pick<LockPeer, 'rwlock'>>;
  const peers = ctx.peers.filter((p): p is RwPeer => p.usesZooKeeper && p.rwlock !== undefined);
  const notes = new Map<string, string>(); // per library
  const { results, failed, failures, median: medianOf } = await runSizedRounds<RwPeer, RwLockRun, RunFigures>(ctx, {
    name: 'rwlock',
    sizes,
    rounds,
    peers,
    label: (size) => `${size} sessions`,
    describe: (size, round) => `${size} sessions, round ${round + 1}/${rounds}, ${durationMs} ms`,
    sessions: (size) => size,
    prepare: async (peer, path, _size, round) => {
      if (round === 0 && warmupMs > 0) await peer.rwlock(path, warmupMs, WRITE_PERCENT);
    },
    measure: (peer, path) => peer.rwlock(path, durationMs, WRITE_PERCENT),
    check: (r, peer) => {
      if (r.note) notes.set(peer.label, r.note);
      return check(r);
    },
    figures: ({ value: r, packets }) => {
      const writes = r.writes.reduce((a, b) => a + b, 0);
      const total = r.reads.reduce((a, b) => a + b, 0) + writes;
      return {
        opsPerSec: (total / r.elapsedMs) * 1000,
        packetsPerOp: total > 0 ? packets / total : Number.NaN,
        writeShare: total > 0 ? writes / total : Number.NaN,
        maxReaders: r.maxReaders,
        conflicts: r.violations + countRwConflicts(r.holds),
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
      const conflicts = list.reduce((a, x) => a + x.conflicts, 0);
      rows.push([
        String(size),
        peer.label + (failed.has(`${size}/${peer.id}`) ? ' (failed)' : ''),
        fmtNum(ops),
        fmtNum(median(list.map((x) => x.packetsPerOp))),
        list.length ? `${(median(list.map((x) => x.writeShare)) * 100).toFixed(1)}%` : 'n/a',
        list.length ? String(Math.max(...list.map((x) => x.maxReaders))) : 'n/a',
        list.length ? (conflicts === 0 ? `none in ${list.length} run(s)` : `**${conflicts}**`) : 'n/a',
        peer.id === 'zk-recipes' ? '1.00×' : fmtRatio(ratio(zk, ops)),
      ]);
    }
  }

  const vs = (size: number, other: PeerId) => ratio(throughput(size, 'zk-recipes'), throughput(size, other));
  const ratioLines = sizes.map((size) => `${size} sessions: zk-recipes ÷ Curator ${fmtRatio(vs(size, 'curator'))}, zk-recipes ÷ kazoo ${fmtRatio(vs(size, 'kazoo'))}`);
  const bars: RatioBar[] = sizes.flatMap((size): RatioBar[] => [
    { metric: `rwlock ${size} sessions`, versus: 'curator', ratio: vs(size, 'curator'), better: 'higher' },
    { metric: `rwlock ${size} sessions`, versus: 'kazoo', ratio: vs(size, 'kazoo'), better: 'higher' },
  ]);

  const markdown = [
    '## 4. Read-write lock: throughput',
    '',
    `Each of N sessions loops for ${durationMs} ms: it draws read (${100 - WRITE_PERCENT}%) or write (${WRITE_PERCENT}%) from its own seeded xorshift32 (session k makes the same choices in every library), acquires that side of the lock, and releases it at once; every session has its own lock objects (zk-recipes \`InterProcessReadWriteLock\`'s readLock()/writeLock(), Curator \`InterProcessReadWriteLock\` on one thread per session, kazoo \`ReadLock\` and \`WriteLock\` on one thread per session). ${rounds} round(s) per size, libraries interleaved; ${warmupMs > 0 ? `the first round of each size is preceded by an unmeasured ${warmupMs} ms warm-up` : 'no warm-up'}. Throughput is acquisitions (reads + writes) per second over the run (median of rounds, machine-dependent); server packets (zk_packets_received + zk_packets_sent, from \`srvr\`, around the run) are per acquisition. All sessions of a library live in one process.`,
    '',
    "Conflict check: in the holder process, counters of readers and writers inside, taken right after acquire returns and right before release (a writer entering while anyone is inside, or a reader entering while a writer is, is a conflict; readers together are not: the most seen at once is in the table), plus a sweep here over the [start, end, kind] timestamps each holder recorded inside its critical section on that process's one monotonic clock. The sections are empty, so readers overlap only when their holds happen to coincide.",
    '',
    mdTable(['sessions', 'library', 'acquisitions / s (machine-dependent)', 'server packets / acquisition', 'writes', 'most readers at once', 'conflicting holds', 'zk-recipes ÷ this'], rows, [2, 3, 4, 5, 7]),
    '',
    `**Ratios (higher is better):** ${ratioLines.join('; ')}.`,
    ...[...notes].map(([label, note]) => `\n- **${label}:** ${note}.`),
  ].join('\n');
  return { markdown, goals: [], bars, failures };
}

export const scenario: Scenario = { name: 'rwlock', order: 4, title: 'Read-write lock throughput', run };
