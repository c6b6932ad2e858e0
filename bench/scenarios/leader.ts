/**
 * `leader`: leader failover. N participants (--participants, default 5), each in its own session
 * of one process per library, run a leader election on one path: zk-recipes' LeaderLatch,
 * Curator's LeaderLatch (with a LeaderLatchListener), kazoo's Election (kazoo has no LeaderLatch;
 * its Election is its Lock, the leader function running while the lock is held).
 *
 * A round: every participant is in the race (has its node) and exactly one leads, and the server
 * has gone quiet (every watch is set); then the leader closes. Failover time: from the start of
 * the leader's close() (kazoo: its leader function being told to return) to the next leader's
 * isLeader callback (kazoo: its leader function starting), on the clock of the process holding
 * every participant. Then the closed participant's session joins again with a new participant, at
 * the end of the line, and the next round starts. Rounds (--rounds, default 20) go in passes of
 * FAILOVERS_PER_PASS, libraries interleaved pass by pass; each pass opens fresh sessions.
 *
 * Checked after every failover: exactly one participant claims leadership (hasLeadership; kazoo:
 * a leader function running), counted once the new leader's callback has run and the old leader's
 * close has returned; exactly one isLeader callback during the failover; and no isLeader callback
 * found another open participant still leading.
 */
import type { LeaderFailover, LockPeer, PeerId } from '../peers/types';
import { fmtNum, fmtRatio, mdTable } from '../report';
import { median, pct, ratio, rotate } from '../stats';
import type { BenchContext, RatioBar, Scenario, ScenarioResult } from './types';

/** Failovers per library per pass; passes rotate the libraries. */
export const FAILOVERS_PER_PASS = 5;

type LeaderPeer = LockPeer & Required<Pick<LockPeer, 'leaderStart' | 'leaderFailover' | 'leaderStop'>>;

/** What each library elects with, for the table. */
const RECIPE: Partial<Record<PeerId, string>> = {
  'zk-recipes': '`LeaderLatch`',
  curator: '`LeaderLatch` + `LeaderLatchListener`',
  kazoo: '`Election` (its `Lock`; no LeaderLatch in kazoo)',
};

interface Figures {
  failoverMs: number[];
  packets: number[];
  /** Failovers after which the leader count, the callbacks or the overlap check were wrong. */
  bad: number;
}

function problem(f: LeaderFailover): string | undefined {
  if (f.leaders !== 1) return `${f.leaders} participants claim leadership after a failover`;
  if (f.elections !== 1) return `${f.elections} isLeader callbacks during one failover`;
  if (f.violations !== 0) return `${f.violations} isLeader callback(s) found another participant still leading`;
  return undefined;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const { quick } = ctx.options;
  const participants = ctx.options.participants;
  const rounds = ctx.options.rounds ?? (quick ? 3 : 20);
  const warmup = quick ? 0 : 2;
  const passes = Math.ceil(rounds / FAILOVERS_PER_PASS);
  const failures: string[] = [];
  const peers = ctx.peers.filter((p): p is LeaderPeer => p.usesZooKeeper && p.leaderStart !== undefined && p.leaderFailover !== undefined && p.leaderStop !== undefined);
  const figures = new Map<PeerId, Figures>(peers.map((p) => [p.id, { failoverMs: [], packets: [], bad: 0 }]));
  const failed = new Set<PeerId>();

  for (let pass = 0; pass < passes; pass++) {
    const inPass = Math.min(FAILOVERS_PER_PASS, rounds - pass * FAILOVERS_PER_PASS);
    for (const peer of rotate(peers, pass)) {
      if (failed.has(peer.id)) continue;
      const f = figures.get(peer.id) as Figures;
      ctx.log(`leader: ${peer.label}, ${participants} participants, failovers ${pass * FAILOVERS_PER_PASS + 1}–${pass * FAILOVERS_PER_PASS + inPass} of ${rounds}`);
      try {
        await peer.open(participants);
        const path = `${ctx.root}/leader/${peer.id}-${pass}`;
        const failovers = (pass === 0 ? warmup : 0) + inPass;
        for (let i = 0; i < failovers; i++) {
          const measured = i >= failovers - inPass;
          await peer.leaderStart(path);
          if (!(await ctx.probe.waitQuiet())) ctx.log('warning: the server did not go quiet before this failover');
          const m = await ctx.probe.measure(() => peer.leaderFailover());
          const bad = problem(m.value);
          if (bad) {
            f.bad++;
            failures.push(`leader, ${peer.label}: ${bad}`);
          }
          if (!measured) continue;
          f.failoverMs.push(m.value.failoverUs / 1000);
          f.packets.push(m.packets);
        }
      } catch (err) {
        failed.add(peer.id);
        failures.push(`leader, ${peer.label}: ${String(err)}`);
      } finally {
        await peer.leaderStop().catch(() => undefined);
        await peer.closeSessions().catch(() => undefined);
      }
    }
  }

  const stat = (id: PeerId, p: number) => {
    const f = figures.get(id);
    return f && f.failoverMs.length > 0 && !failed.has(id) ? pct(f.failoverMs, p) : Number.NaN;
  };
  const vs = (other: PeerId, p: number) => ratio(stat('zk-recipes', p), stat(other, p));
  const rows = peers.map((peer) => {
    const f = figures.get(peer.id) as Figures;
    return [
      peer.label + (failed.has(peer.id) ? ' (failed)' : ''),
      RECIPE[peer.id] ?? '',
      fmtNum(stat(peer.id, 50)),
      fmtNum(stat(peer.id, 99)),
      fmtNum(median(f.packets)),
      String(f.failoverMs.length),
      f.failoverMs.length === 0 ? 'n/a' : f.bad === 0 ? 'exactly one, every time' : `**wrong ${f.bad} time(s)**`,
      peer.id === 'zk-recipes' ? '1.00×' : `${fmtRatio(vs(peer.id, 50))} / ${fmtRatio(vs(peer.id, 99))}`,
    ];
  });
  const bars: RatioBar[] = [
    { metric: 'leader failover p50', versus: 'curator', ratio: vs('curator', 50), better: 'lower' },
    { metric: 'leader failover p99', versus: 'curator', ratio: vs('curator', 99), better: 'lower' },
    { metric: 'leader failover p50', versus: 'kazoo', ratio: vs('kazoo', 50), better: 'lower' },
    { metric: 'leader failover p99', versus: 'kazoo', ratio: vs('kazoo', 99), better: 'lower' },
  ];

  const markdown = [
    '## 5. Leader election: failover',
    '',
    `${participants} participants, each in its own session (all of a library's in one process), elect a leader on one path. A round starts once every participant has its node, exactly one leads, and the server has gone quiet (every watch set); then the leader closes. Failover time: from the start of the leader's \`close()\` to the next leader's isLeader callback, on that process's monotonic clock (ms, machine-dependent). kazoo has no LeaderLatch: it runs \`Election\`, whose leader function runs while its \`Lock\` is held; closing is the leader function returning (the lock's node is then deleted), and the next leader's function starting is its isLeader. After each failover the closed participant's session joins again with a new participant, at the end of the line. ${rounds} failovers per library (p50 and p99 over all of them${warmup > 0 ? `, after ${warmup} unmeasured ones` : ''}), in passes of ${FAILOVERS_PER_PASS} with fresh sessions, libraries interleaved pass by pass. Server packets (zk_packets_received + zk_packets_sent, from \`srvr\`) are those of one failover: from the close to the new leader's callback and the old leader's close returning (median).`,
    '',
    "Leader check, after every failover: exactly one participant claims leadership (`hasLeadership`; kazoo: a leader function running), counted once the new leader's callback has run and the old leader's close has returned, the closed participant included; exactly one isLeader callback during the failover; and no isLeader callback found another open participant still leading.",
    '',
    mdTable(['library', 'recipe', 'failover p50 ms (machine-dependent)', 'failover p99 ms (machine-dependent)', 'server packets / failover', 'failovers', 'leaders after each failover', 'zk-recipes ÷ this, p50 / p99'], rows, [2, 3, 4, 5]),
    '',
    `**Ratios (lower is better):** zk-recipes ÷ Curator: p50 ${fmtRatio(vs('curator', 50))}, p99 ${fmtRatio(vs('curator', 99))}; zk-recipes ÷ kazoo: p50 ${fmtRatio(vs('kazoo', 50))}, p99 ${fmtRatio(vs('kazoo', 99))}.`,
  ].join('\n');
  return { markdown, goals: [], bars, failures };
}

export const scenario: Scenario = { name: 'leader', order: 5, title: 'Leader failover', run };
