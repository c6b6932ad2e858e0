/**
 * `discovery`: service discovery (curator-x-discovery), zk-recipes against Curator's. Per round and
 * library, on one session:
 *
 * - **register**: a ServiceDiscovery registers W + N DYNAMIC (ephemeral) instances of one service,
 *   one `registerService` after another, each instance built before its timing starts. As in
 *   `uncontended` (sequential calls on one session), the figure is the latency of one call, p50 and
 *   p99 over the N measured calls of every round (the first W of each round are warm-up).
 * - **cache warm-up**: N instances of another service (--discovery-instances, default 1,000), are
 *   registered once by a writer of the bench's own (one zk-recipes client, ephemeral nodes holding
 *   the instances' JSON, the same for every library). A round-robin ServiceProvider starts on that
 *   service, and the warm-up is the time its `start()` takes: its ServiceCache's start, which
 *   returns once the instances are loaded. Median over rounds.
 * - **provider pick rate**: `getInstance()` on that provider in a tight loop for a fixed time (the
 *   clock read every 256 picks), picks per second; median over rounds. No I/O: this is the client's
 *   own work per pick (both libraries filter the cached list on every pick, as Curator's does).
 *
 * Checked: every registration resolves and the server then holds W + N instances of the service;
 * the provider holds exactly N instances once started; no pick returns nothing; and 2 × N picks
 * after the timed loop return exactly the N registered instances (round-robin visits them all).
 *
 * kazoo has no service discovery recipe (nothing that reads or writes curator-x-discovery's
 * instances), so it takes no part. No goal: the figures and ratios are reported.
 */
import { ZkClient } from '../../src';
import { JsonInstanceSerializer, createServiceInstance } from '../../recipes/discovery';
import { windowed } from '../peers/cacheTree';
import type { DiscoveryPicks, DiscoveryWarm, LockPeer, PeerId } from '../peers/types';
import { fmtNum, fmtRatio, mdTable } from '../report';
import { median, pct, ratio, rotate } from '../stats';
import type { BenchContext, RatioBar, Scenario, ScenarioResult } from './types';

type DiscoveryPeer = LockPeer & Required<Pick<LockPeer, 'discoveryRegister' | 'discoveryWarm' | 'discoveryPick' | 'discoveryStop'>>;

/** The services' names: the one each library registers into, and the one the writer fills. */
const REGISTERED = 'registered';
const WARMED = 'warmed';

interface Figures {
  registerUs: number[];
  registerPackets: number[];
  warmMs: number[];
  warmPackets: number[];
  picksPerSec: number[];
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const { quick } = ctx.options;
  const instances = ctx.options.discoveryInstances ?? (quick ? 100 : 1_000);
  const warmup = quick ? 10 : 100;
  const rounds = ctx.options.rounds ?? (quick ? 1 : 5);
  const pickMs = quick ? 100 : 1_000;
  const peers = ctx.peers.filter(
    (p): p is DiscoveryPeer => p.usesZooKeeper && p.discoveryRegister !== undefined && p.discoveryWarm !== undefined && p.discoveryPick !== undefined && p.discoveryStop !== undefined,
  );
  const figures = new Map<PeerId, Figures>(peers.map((p) => [p.id, { registerUs: [], registerPackets: [], warmMs: [], warmPackets: [], picksPerSec: [] }]));
  const failed = new Set<PeerId>();
  const failures: string[] = [];

  const base = `${ctx.root}/discovery`;
  const writer = new ZkClient({ connectString: ctx.connectString, sessionTimeoutMs: ctx.sessionTimeoutMs });
  writer.start();
  try {
    await writer.blockUntilConnected({ timeoutMs: 30_000 });
    // The writer's instances live as long as its session, through every round.
    ctx.log(`discovery: registering ${instances} instances of ${base}/services/${WARMED}`);
    const serializer = new JsonInstanceSerializer();
    const registered = Array.from({ length: instances }, (_, k) => createServiceInstance({ name: WARMED, address: '127.0.0.1', port: 8080, uriSpec: '{scheme}://{address}:{port}', payload: { index: k } }));
    await writer.create(`${base}/services/${WARMED}`, { createParents: 'persistent' });
    await windowed(registered, (i) => writer.create(`${base}/services/${WARMED}/${i.id}`, { data: serializer.serialize(i), mode: 'EPHEMERAL' }));
    const registeredIds = new Set(registered.map((i) => i.id));

    for (let round = 0; round < rounds; round++) {
      for (const peer of rotate(peers, round)) {
        if (failed.has(peer.id)) continue;
        ctx.log(`discovery: ${peer.label}, ${instances} instances, round ${round + 1}/${rounds}`);
        try {
          await peer.open(1);
          const own = `${base}/${peer.id}-${round}`;
          await ctx.probe.waitQuiet();
          const reg = await ctx.probe.measure(() => peer.discoveryRegister(own, REGISTERED, warmup + instances));
          const held = await writer.getChildren(`${own}/${REGISTERED}`);
          if (held.length !== warmup + instances) throw new Error(`the server holds ${held.length} registered instances, not ${warmup + instances}`);
          await ctx.probe.waitQuiet();
          const warm = await ctx.probe.measure<DiscoveryWarm>(() => peer.discoveryWarm(`${base}/services`, WARMED));
          if (warm.value.instances !== instances) throw new Error(`the provider held ${warm.value.instances} instances once started, not ${instances}`);
          const picks: DiscoveryPicks = await peer.discoveryPick(pickMs, 2 * instances);
          if (picks.nulls > 0) throw new Error(`${picks.nulls} picks returned no instance`);
          const strangers = picks.ids.filter((id) => !registeredIds.has(id));
          if (strangers.length > 0 || picks.ids.length !== instances) {
            throw new Error(`${2 * instances} picks returned ${picks.ids.length} distinct instances (${strangers.length} not registered), not the ${instances} registered`);
          }
          const f = figures.get(peer.id) as Figures;
          f.registerUs.push(...reg.value.slice(warmup));
          f.registerPackets.push(reg.packets / (warmup + instances));
          f.warmMs.push(warm.value.elapsedMs);
          f.warmPackets.push(warm.packets / instances);
          f.picksPerSec.push((picks.picks / picks.elapsedMs) * 1000);
        } catch (err) {
          failed.add(peer.id);
          failures.push(`discovery, ${peer.label}: ${String(err)}`);
        } finally {
          await peer.discoveryStop().catch(() => undefined);
          await peer.closeSessions().catch(() => undefined);
        }
      }
    }
  } finally {
    await writer.delete(base, { recursive: true, quietly: true }).catch(() => undefined);
    await writer.close();
  }

  const fig = (id: PeerId) => (failed.has(id) ? undefined : figures.get(id));
  const regP = (id: PeerId, p: number) => {
    const f = fig(id);
    return f && f.registerUs.length > 0 ? pct(f.registerUs, p) : Number.NaN;
  };
  const med = (id: PeerId, pick: (f: Figures) => number[]) => {
    const f = fig(id);
    return f ? median(pick(f)) : Number.NaN;
  };
  const versus = (other: PeerId) => ({
    p50: ratio(regP('zk-recipes', 50), regP(other, 50)),
    p99: ratio(regP('zk-recipes', 99), regP(other, 99)),
    warm: ratio(med('zk-recipes', (f) => f.warmMs), med(other, (f) => f.warmMs)),
    picks: ratio(med('zk-recipes', (f) => f.picksPerSec), med(other, (f) => f.picksPerSec)),
  });
  const rows = peers.map((peer) => {
    const v = versus(peer.id);
    return [
      peer.label + (failed.has(peer.id) ? ' (failed)' : ''),
      fmtNum(regP(peer.id, 50)),
      fmtNum(regP(peer.id, 99)),
      fmtNum(med(peer.id, (f) => f.registerPackets)),
      fmtNum(med(peer.id, (f) => f.warmMs)),
      fmtNum(med(peer.id, (f) => f.warmPackets)),
      fmtNum(med(peer.id, (f) => f.picksPerSec)),
      peer.id === 'zk-recipes' ? '1.00× / 1.00× / 1.00×' : `${fmtRatio(v.p50)} / ${fmtRatio(v.warm)} / ${fmtRatio(v.picks)}`,
    ];
  });
  const others = peers.filter((p) => p.id !== 'zk-recipes');
  const bars: RatioBar[] = others.flatMap((p): RatioBar[] => {
    const v = versus(p.id);
    return [
      { metric: 'discovery register p50', versus: p.id, ratio: v.p50, better: 'lower' },
      { metric: `discovery warm-up ${instances}`, versus: p.id, ratio: v.warm, better: 'lower' },
      { metric: 'discovery picks', versus: p.id, ratio: v.picks, better: 'higher' },
    ];
  });
  const ratioLines = others.map((p) => {
    const v = versus(p.id);
    return `${p.label}: register p50 ${fmtRatio(v.p50)}, p99 ${fmtRatio(v.p99)}, cache warm-up ${fmtRatio(v.warm)} (lower is better), picks per second ${fmtRatio(v.picks)} (higher is better)`;
  });
  const n = instances.toLocaleString('en-US');
  const markdown = [
    '## 9. Service discovery: register, cache warm-up, provider picks',
    '',
    `Per round and library, on one session. **Register:** a ServiceDiscovery registers ${warmup} + ${n} DYNAMIC (ephemeral) instances of one service, one \`registerService\` after another, each instance built before its timing starts; latency of one call (µs on the library's process clock), p50 and p99 over the ${n} measured calls of every round. **Cache warm-up:** ${n} instances of another service, registered once by a writer of the bench's own (one zk-recipes client, the same for every library); a round-robin ServiceProvider starts on it, and the warm-up is its \`start()\`, which returns once its ServiceCache has loaded them. **Picks:** \`getInstance()\` on that provider in a tight loop for ${pickMs.toLocaleString('en-US')} ms (no I/O). ${rounds} round(s), libraries interleaved; warm-up and picks are medians over rounds. Server packets (zk_packets_received + zk_packets_sent, from \`srvr\`) are per registration and per instance loaded. Checked: the server holds every registered instance, the provider holds exactly ${n} once started, no pick returns nothing, and ${(2 * instances).toLocaleString('en-US')} picks after the timed loop return exactly the ${n} registered instances.`,
    '',
    "zk-recipes' ServiceCache reads the service with a PathChildrenCache (a CuratorCache of depth 1: one persistent recursive watch on the protocol transport, one-shot watches on the native binding); Curator 5.4's is a CuratorCache bridge (one persistent recursive watch on ZooKeeper 3.6+), and it first makes sure the service's node exists. A zk-recipes DYNAMIC instance is kept by a PersistentNode; Curator's is one create. kazoo has no service discovery recipe and takes no part.",
    '',
    mdTable(
      ['library', 'register p50 µs (machine-dependent)', 'register p99 µs (machine-dependent)', 'server packets / registration', `warm-up ${n}, ms (machine-dependent)`, 'server packets / instance loaded', 'picks / s (machine-dependent)', 'zk-recipes ÷ this (register p50 / warm-up / picks per s)'],
      rows,
      [1, 2, 3, 4, 5, 6, 7],
    ),
    '',
    `**Ratios:** ${ratioLines.join('; ') || 'no other library ran'}.`,
  ].join('\n');
  return { markdown, goals: [], bars, failures };
}

export const scenario: Scenario = { name: 'discovery', order: 9, title: 'Service discovery', run };
