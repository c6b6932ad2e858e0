/**
 * `uncontended`: acquire + release of a mutex nobody else wants, one pair after another on one
 * session. Latency p50/p99 per library (zk-recipes on each transport), server packets per pair,
 * and the floor of each transport: the bare binding, and the bare protocol transport, doing the
 * two round trips a ZooKeeper lock needs (create + list sent together, then delete). On an
 * ensemble, every library's one session and each floor's is on the same follower (the spread's first).
 */
import { FloorClient } from '../peers/floor';
import { ProtocolFloorClient } from '../peers/protocolFloor';
import { RawFloorClient } from '../peers/rawFloor';
import { connectStringOf, type PeerId } from '../peers/types';
import { ensembleNote, fmtNum, fmtRatio, judge, mdTable, memberColumn, notMeasured } from '../report';
import { median, medianEach, pct, ratio, rotate } from '../stats';
import type { BenchContext, Goal, RatioBar, Scenario, ScenarioResult } from './types';

type RunnerKey = PeerId | 'floor' | 'floor-protocol' | 'floor-raw';

interface Runner {
  key: RunnerKey;
  label: string;
  usesZooKeeper: boolean;
  /** Whether it runs in this process, so that this process's CPU time is its client's. */
  inProcess: boolean;
  open(): Promise<void>;
  close(): Promise<void>;
  run(path: string, iterations: number): Promise<number[]>;
}

interface Figures {
  label: string;
  usesZooKeeper: boolean;
  lat: number[];
  packets: number[];
  /** Per round: the packets per pair at each member (an ensemble's), in the spread's order. */
  packetsByMember: number[][];
  bytes: number[];
  /** Client CPU (user + system of this process) per pair, µs, per round; empty for a library in a process of its own. */
  cpu: number[];
  failed: boolean;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const { quick } = ctx.options;
  const rounds = ctx.options.rounds ?? (quick ? 1 : 5);
  const iterations = ctx.options.iterations ?? (quick ? 30 : 2_000);
  const warmup = quick ? 10 : 1_000;
  // The floors' one session goes where every library's session 0 goes.
  const floor = new FloorClient(connectStringOf(ctx.spread, 0), ctx.sessionTimeoutMs);
  const protocolFloor = new ProtocolFloorClient(connectStringOf(ctx.spread, 0), ctx.sessionTimeoutMs);
  const rawFloor = new RawFloorClient(ctx.spread, ctx.sessionTimeoutMs);
  const runners: Runner[] = [
    ...ctx.peers.map(
      (p): Runner => ({
        key: p.id,
        label: p.label,
        usesZooKeeper: p.usesZooKeeper,
        inProcess: p.id === 'zk-recipes' || p.id === 'zk-recipes-native' || p.id === 'redis',
        open: () => p.open(1),
        close: () => p.closeSessions(),
        run: (path, n) => p.uncontended(path, n),
      }),
    ),
    { key: 'floor', label: floor.label, usesZooKeeper: true, inProcess: true, open: () => floor.open(), close: async () => floor.close(), run: (path, n) => floor.uncontended(path, n) },
    {
      key: 'floor-protocol',
      label: protocolFloor.label,
      usesZooKeeper: true,
      inProcess: true,
      open: () => protocolFloor.open(),
      close: () => protocolFloor.close(),
      run: (path, n) => protocolFloor.uncontended(path, n),
    },
    {
      key: 'floor-raw',
      label: rawFloor.label,
      usesZooKeeper: true,
      inProcess: true,
      open: () => rawFloor.open(1),
      close: () => rawFloor.close(),
      run: (path, n) => rawFloor.uncontended(path, n),
    },
  ];
  const figures = new Map<string, Figures>(runners.map((r) => [r.key, { label: r.label, usesZooKeeper: r.usesZooKeeper, lat: [], packets: [], packetsByMember: [], bytes: [], cpu: [], failed: false }]));
  const failures: string[] = [];

  for (let round = 0; round < rounds; round++) {
    for (const runner of rotate(runners, round)) {
      const f = figures.get(runner.key) as Figures;
      if (f.failed) continue;
      ctx.log(`uncontended: ${runner.label}, round ${round + 1}/${rounds}, ${iterations} pairs`);
      try {
        await runner.open();
        const path = `${ctx.root}/uncontended/${runner.key}-${round}`;
        await runner.run(path, warmup); // also creates the lock's parent node
        if (!(await ctx.probe.waitQuiet())) ctx.log('warning: the server did not go quiet before this measurement');
        const m = await ctx.probe.measure(async () => {
          const cpu0 = process.cpuUsage();
          const lat = await runner.run(path, iterations);
          const cpu = process.cpuUsage(cpu0);
          return { lat, cpuUs: cpu.user + cpu.system };
        });
        f.lat.push(...m.value.lat);
        if (runner.inProcess) f.cpu.push(m.value.cpuUs / iterations);
        f.packets.push(m.packets / iterations);
        f.packetsByMember.push(m.packetsByMember.map((p) => p / iterations));
        f.bytes.push(m.bytes / iterations);
      } catch (err) {
        f.failed = true;
        failures.push(`uncontended, ${runner.label}: ${String(err)}`);
      } finally {
        await runner.close().catch(() => undefined);
      }
    }
  }

  const stat = (key: string, p: number) => {
    const f = figures.get(key);
    return f && f.lat.length > 0 && !f.failed ? pct(f.lat, p) : Number.NaN;
  };
  const cpuOf = (key: string) => {
    const f = figures.get(key);
    return f && f.cpu.length > 0 && !f.failed ? median(f.cpu) : Number.NaN;
  };
  const byMember = memberColumn(ctx.members, 'server packets / pair');
  const zk50 = stat('zk-recipes', 50);
  const zk99 = stat('zk-recipes', 99);
  const rows = runners.map((r) => {
    const f = figures.get(r.key) as Figures;
    const p50 = stat(r.key, 50);
    const p99 = stat(r.key, 99);
    const packets = f.usesZooKeeper ? fmtNum(pct(f.packets, 50)) : 'n/a (Redis)';
    const bytes = f.usesZooKeeper ? fmtNum(pct(f.bytes, 50)) : 'n/a';
    const cpu = r.inProcess ? fmtNum(cpuOf(r.key)) : 'n/a (own process)';
    return [
      f.label + (f.failed ? ' (failed)' : ''),
      fmtNum(p50),
      fmtNum(p99),
      cpu,
      packets,
      bytes,
      r.key === 'zk-recipes' ? '1.00×' : `${fmtRatio(ratio(zk50, p50))} / ${fmtRatio(ratio(zk99, p99))}`,
      ...byMember.cell(f.usesZooKeeper ? medianEach(f.packetsByMember) : []),
    ];
  });

  const versus = (key: RunnerKey) => ({ p50: ratio(zk50, stat(key, 50)), p99: ratio(zk99, stat(key, 99)) });
  const cur = versus('curator');
  const kaz = versus('kazoo');
  const flo = versus('floor-protocol');
  const raw = versus('floor-raw');
  const rawCpu = ratio(cpuOf('zk-recipes'), cpuOf('floor-raw'));
  const transportCpu = ratio(cpuOf('floor-protocol'), cpuOf('floor-raw'));
  const curVsRaw = { p50: ratio(stat('curator', 50), stat('floor-raw', 50)), p99: ratio(stat('curator', 99), stat('floor-raw', 99)) };
  const nat = versus('zk-recipes-native');
  const natFlo = { p50: ratio(stat('zk-recipes-native', 50), stat('floor', 50)), p99: ratio(stat('zk-recipes-native', 99), stat('floor', 99)) };
  const floors = { p50: ratio(stat('floor-protocol', 50), stat('floor', 50)), p99: ratio(stat('floor-protocol', 99), stat('floor', 99)) };
  const hasNative = figures.has('zk-recipes-native');
  const notBuilt = 'the native binding is not built';
  const goals: Goal[] = [
    figures.has('curator') ? judge('uncontended latency p50 ≤ 0.75 × Curator', cur.p50, 0.75, 'lower') : notMeasured('uncontended latency p50 ≤ 0.75 × Curator', 'Curator skipped'),
    judge('uncontended latency p50 ≤ 1.15 × the floor (bare protocol transport)', flo.p50, 1.15, 'lower'),
    judge('uncontended client CPU per pair ≤ 1.4 × the raw-socket floor', rawCpu, 1.4, 'lower'),
    judge('uncontended latency p50 ≤ 1.1 × the raw-socket floor', raw.p50, 1.1, 'lower'),
    hasNative ? judge('uncontended latency p50, protocol transport ≤ 1 × native transport', nat.p50, 1, 'lower') : notMeasured('uncontended latency p50, protocol transport ≤ 1 × native transport', notBuilt),
    hasNative
      ? judge('uncontended latency p50 on the native transport ≤ 1.15 × its floor (bare binding)', natFlo.p50, 1.15, 'lower')
      : notMeasured('uncontended latency p50 on the native transport ≤ 1.15 × its floor (bare binding)', notBuilt),
  ];
  const bars: RatioBar[] = [
    { metric: 'uncontended p50', versus: 'curator', ratio: cur.p50, better: 'lower', goal: 0.75 },
    { metric: 'uncontended p99', versus: 'curator', ratio: cur.p99, better: 'lower' },
    { metric: 'uncontended p50', versus: 'kazoo', ratio: kaz.p50, better: 'lower' },
    { metric: 'uncontended p99', versus: 'kazoo', ratio: kaz.p99, better: 'lower' },
    { metric: 'uncontended p50', versus: 'zk-recipes-native', ratio: nat.p50, better: 'lower', goal: 1 },
  ];

  const markdown = [
    `## 1. Uncontended: acquire + release${ctx.headingSuffix}`,
    '',
    `One session, one pair after another: ${rounds} round(s) × ${iterations} measured pairs per library (after ${warmup} warm-up pairs each round), libraries interleaved round by round. Latency is the wall time of \`acquire()\` + \`release()\` on the library's own process clock (µs, machine-dependent). Server packets are its zk_packets_received + zk_packets_sent (read with \`srvr\`), server bytes its zk_bytes_received_count + zk_response_bytes (\`mntr\`), each taken right before and right after a library's measured run with no other client connected, the readings' own share removed, and divided by the pairs (median over rounds). 6 packets per pair is 3 requests and their responses.${ensembleNote(ctx.members)}`,
    '',
    mdTable(['library', 'p50 µs (machine-dependent)', 'p99 µs (machine-dependent)', 'client CPU µs / pair (machine-dependent)', 'server packets / pair', 'server bytes / pair', 'zk-recipes ÷ this, p50 / p99', ...byMember.header], rows, [1, 2, 3, 4, 5, 6, 7]),
    '',
    `**Ratios (the claim):** zk-recipes ÷ Curator: p50 ${fmtRatio(cur.p50)}, p99 ${fmtRatio(cur.p99)}; zk-recipes ÷ kazoo: p50 ${fmtRatio(kaz.p50)}, p99 ${fmtRatio(kaz.p99)}; zk-recipes ÷ its floor (bare protocol transport): p50 ${fmtRatio(flo.p50)}, p99 ${fmtRatio(flo.p99)}.`,
    '',
    `**Against the raw-socket floor** (our own minimal client over \`node:net\`, sending the same requests with the same writes): zk-recipes ÷ raw: client CPU ${fmtRatio(rawCpu)}, p50 ${fmtRatio(raw.p50)}, p99 ${fmtRatio(raw.p99)}; bare protocol transport ÷ raw: client CPU ${fmtRatio(transportCpu)}; Curator ÷ raw: p50 ${fmtRatio(curVsRaw.p50)}, p99 ${fmtRatio(curVsRaw.p99)}. Client CPU is this process's user + system time over the measured pairs (the server and the other libraries run in processes of their own), median over rounds.`,
    '',
    `**Transports:** zk-recipes on the protocol transport ÷ on the native one: p50 ${fmtRatio(nat.p50)}, p99 ${fmtRatio(nat.p99)}; on the native transport ÷ its floor (bare binding): p50 ${fmtRatio(natFlo.p50)}, p99 ${fmtRatio(natFlo.p99)}; bare protocol transport ÷ bare binding: p50 ${fmtRatio(floors.p50)}, p99 ${fmtRatio(floors.p99)}.`,
  ].join('\n');
  return { markdown, goals, bars, failures };
}

export const scenario: Scenario = { name: 'uncontended', order: 1, title: 'Uncontended acquire + release', run };
