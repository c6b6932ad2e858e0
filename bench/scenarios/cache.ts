/**
 * `cache`: CuratorCache. A tree of N nodes (--cache-nodes, default 10,000: 100 parents of 99
 * children each, under one root, 20 bytes of data each) is built once. Per round and library, on
 * one session: the library's CuratorCache is started on the root, and the **initial load** is
 * timed from start to its initialized event; then a writer of the bench's own (one zk-recipes
 * client in a process of its own, the same for every library, 500 changes in flight) changes every
 * node but the root once, and **event throughput** is N ÷ the time from the first change sent to
 * the library's last change event (on the library's process clock: the time counts from
 * `cacheExpect`, sent right before the writer starts).
 *
 * Each library as it comes: zk-recipes' CuratorCache on the protocol transport sets one persistent
 * recursive watch on the root, as Curator's CuratorCache (CuratorCache.build, no options) does; on
 * the native binding it watches every node with one-shot watches (a data and a children watch per
 * node, as Curator's TreeCache does).
 *
 * Checked: the cache holds N + 1 nodes once initialized, and hears exactly N changes.
 */
import { join } from 'node:path';
import { ZkClient } from '../../src';
import { WRITE_WINDOW, treePaths, windowed } from '../peers/cacheTree';
import { LineProcess } from '../peers/remote';
import { spawnPiped } from '../peers/spawn';
import type { CacheEventsRun, CacheLoad, LockPeer, PeerId } from '../peers/types';
import { fmtNum, fmtRatio, mdTable } from '../report';
import { median, ratio, rotate } from '../stats';
import type { BenchContext, RatioBar, Scenario, ScenarioResult } from './types';

type CachePeer = LockPeer & Required<Pick<LockPeer, 'cacheLoad' | 'cacheExpect' | 'cacheAwait' | 'cacheStop'>>;

/** How long a library may take to hear every change before the run fails. */
const EVENTS_TIMEOUT_MS = 180_000;

interface Figures {
  loadMs: number[];
  loadPackets: number[];
  eventsPerSec: number[];
  eventPackets: number[];
}

/** Starts the writer process (bench/peers/cacheWriter.ts) on the server. */
async function startWriter(connectString: string): Promise<LineProcess> {
  const child = spawnPiped(process.execPath, ['-r', 'ts-node/register/transpile-only', join(__dirname, '..', 'peers', 'cacheWriter.ts')], 'cache-writer');
  const writer = new LineProcess(child, 'cache writer', 60_000);
  try {
    await writer.ready;
    await writer.request('open', { connect: connectString });
    return writer;
  } catch (err) {
    await writer.close(1_000);
    throw err;
  }
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const { quick } = ctx.options;
  const nodes = ctx.options.cacheNodes ?? (quick ? 200 : 10_000);
  const rounds = ctx.options.rounds ?? (quick ? 1 : 3);
  const peers = ctx.peers.filter((p): p is CachePeer => p.usesZooKeeper && p.cacheLoad !== undefined && p.cacheExpect !== undefined && p.cacheAwait !== undefined && p.cacheStop !== undefined);
  const figures = new Map<PeerId, Figures>(peers.map((p) => [p.id, { loadMs: [], loadPackets: [], eventsPerSec: [], eventPackets: [] }]));
  const failed = new Set<PeerId>();
  const failures: string[] = [];

  const writer = await startWriter(ctx.connectString);
  const builder = new ZkClient({ connectString: ctx.connectString, sessionTimeoutMs: ctx.sessionTimeoutMs });
  builder.start();
  const root = `${ctx.root}/cache/tree`;
  const paths = treePaths(root, nodes);
  try {
    await builder.blockUntilConnected({ timeoutMs: 30_000 });
    ctx.log(`cache: building a tree of ${nodes} nodes under ${root}`);
    await builder.create(root, { createParents: 'persistent', data: 'x'.repeat(20) });
    const depth = root.split('/').length + 1;
    const parents = paths.filter((p) => p.split('/').length === depth);
    await windowed(parents, (p) => builder.create(p, { data: 'x'.repeat(20) }));
    await windowed(
      paths.filter((p) => p.split('/').length > depth),
      (p) => builder.create(p, { data: 'x'.repeat(20) }),
    );
    for (let round = 0; round < rounds; round++) {
      for (const peer of rotate(peers, round)) {
        if (failed.has(peer.id)) continue;
        ctx.log(`cache: ${peer.label}, ${nodes} nodes, round ${round + 1}/${rounds}`);
        try {
          await peer.open(1);
          await ctx.probe.waitQuiet();
          const load = await ctx.probe.measure<CacheLoad>(() => peer.cacheLoad(root));
          if (load.value.nodes !== nodes + 1) throw new Error(`the cache held ${load.value.nodes} nodes once initialized, not ${nodes + 1}`);
          await ctx.probe.waitQuiet();
          const data = `r${round}-${peer.id}`;
          const events = await ctx.probe.measure<CacheEventsRun>(async () => {
            await peer.cacheExpect(nodes);
            await writer.request('write', { root, nodes, data }, EVENTS_TIMEOUT_MS);
            return peer.cacheAwait(EVENTS_TIMEOUT_MS);
          });
          if (events.value.events !== nodes) throw new Error(`the cache heard ${events.value.events} of ${nodes} changes`);
          const f = figures.get(peer.id) as Figures;
          f.loadMs.push(load.value.elapsedMs);
          f.loadPackets.push(load.packets / (nodes + 1));
          f.eventsPerSec.push((nodes / events.value.elapsedMs) * 1000);
          f.eventPackets.push(events.packets / nodes);
        } catch (err) {
          failed.add(peer.id);
          failures.push(`cache, ${peer.label}: ${String(err)}`);
        } finally {
          await peer.cacheStop().catch(() => undefined);
          await peer.closeSessions().catch(() => undefined);
        }
      }
    }
  } finally {
    await writer.close();
    await builder.delete(root, { recursive: true, quietly: true }).catch(() => undefined);
    await builder.close();
  }

  const med = (id: PeerId, pick: (f: Figures) => number[]) => (failed.has(id) ? Number.NaN : median(pick(figures.get(id) as Figures)));
  const loadVs = (other: PeerId) => ratio(med('zk-recipes', (f) => f.loadMs), med(other, (f) => f.loadMs));
  const eventsVs = (other: PeerId) => ratio(med('zk-recipes', (f) => f.eventsPerSec), med(other, (f) => f.eventsPerSec));
  const rows = peers.map((peer) => [
    peer.label + (failed.has(peer.id) ? ' (failed)' : ''),
    fmtNum(med(peer.id, (f) => f.loadMs)),
    fmtNum(((nodes + 1) / med(peer.id, (f) => f.loadMs)) * 1000),
    fmtNum(med(peer.id, (f) => f.loadPackets)),
    fmtNum(med(peer.id, (f) => f.eventsPerSec)),
    fmtNum(med(peer.id, (f) => f.eventPackets)),
    peer.id === 'zk-recipes' ? '1.00× / 1.00×' : `${fmtRatio(loadVs(peer.id))} / ${fmtRatio(eventsVs(peer.id))}`,
  ]);
  const others = peers.filter((p) => p.id !== 'zk-recipes');
  const bars: RatioBar[] = others.flatMap((p): RatioBar[] => [
    { metric: `cache load ${nodes}`, versus: p.id, ratio: loadVs(p.id), better: 'lower' },
    { metric: 'cache events', versus: p.id, ratio: eventsVs(p.id), better: 'higher' },
  ]);
  const ratioLines = others.map((p) => `${p.label}: initial load time ${fmtRatio(loadVs(p.id))} (lower is better), event throughput ${fmtRatio(eventsVs(p.id))} (higher is better)`);
  const markdown = [
    '## 7. CuratorCache: initial load and event throughput',
    '',
    `A tree of ${nodes.toLocaleString('en-US')} nodes (under one root: ${Math.round(Math.sqrt(nodes))} parents and their children, 20 bytes of data each). Per round and library, on one session: the library's CuratorCache starts on the root, and the initial load is timed from its start to its initialized event; then a writer of the bench's own (one zk-recipes client in a process of its own, the same for every library, ${WRITE_WINDOW} changes in flight) changes every node but the root once, and event throughput is ${nodes.toLocaleString('en-US')} ÷ the time from the first change sent to the cache's last change event, on the library's process clock. Median of ${rounds} round(s), libraries interleaved. Server packets (zk_packets_received + zk_packets_sent, from \`srvr\`) are per node loaded and per change (the writer's own request and response included, the same for every library).`,
    '',
    "zk-recipes' CuratorCache on the protocol transport, like Curator's CuratorCache, sets one persistent recursive watch (ZooKeeper 3.6+) and reads each node it hears of; on the native binding (which has no persistent watches) it puts a one-shot data watch and a one-shot children watch on every node, as Curator's TreeCache does, and re-reads a node when its watch fires.",
    '',
    mdTable(['library', 'initial load, ms (machine-dependent)', 'nodes / s', 'server packets / node loaded', 'change events / s (machine-dependent)', 'server packets / change', 'zk-recipes ÷ this (load time / events per s)'], rows, [1, 2, 3, 4, 5, 6]),
    '',
    `**Ratios:** ${ratioLines.join('; ') || 'no other library ran'}.`,
  ].join('\n');
  return { markdown, goals: [], bars, failures };
}

export const scenario: Scenario = { name: 'cache', order: 7, title: 'CuratorCache', run };
