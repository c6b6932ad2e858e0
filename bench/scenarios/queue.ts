/**
 * `queue`: distributed queue throughput with N producers × N consumers for each N of
 * --queue-sizes (default 1 and 4), every producer and every consumer in its own session (all of a
 * library's in one process). The producers put M items in all (--queue-items; default 2,000 at
 * 1 × 1 and 1,000 per producer above that), each naming its producer and its sequence; the
 * consumers take them. Throughput: M ÷ the time from the first put to the last item consumed.
 *
 * Each library in its natural usage, in its at-most-once mode (an item is deleted as it is taken):
 * zk-recipes' DistributedQueue without a lockPath (`start(handler)`, one item at a time, `await
 * put()` in a loop); Curator's DistributedQueue from QueueBuilder's defaults (no lock path, puts in
 * the background, a QueueConsumer on the direct executor, a UTF-8 string serializer of ours);
 * kazoo's Queue (`put()`, and `get()` in a loop: it returns None on an empty queue, so a consumer
 * sleeps 5 ms before asking again).
 *
 * Checked: every item delivered exactly once; at 1 × 1 also in the order it was put.
 */
import { itemsPerProducer, type LockPeer, type PeerId, type QueueRun } from '../peers/types';
import { fmtNum, fmtRatio, mdTable } from '../report';
import { median, ratio } from '../stats';
import { runSizedRounds } from './sizedRounds';
import type { BenchContext, RatioBar, Scenario, ScenarioResult } from './types';

type QueuePeer = LockPeer & Required<Pick<LockPeer, 'queuePrepare' | 'queueRun'>>;

interface RunFigures {
  itemsPerSec: number;
  packetsPerItem: number;
}

export interface Delivery {
  lost: number;
  /** Deliveries beyond the first of an item. */
  duplicated: number;
  /** Deliveries of items nobody put. */
  unknown: number;
  /** Items a consumer got before an earlier item of the same producer. */
  outOfOrder: number;
}

/** Checks a run's deliveries against what `producers` producers put of `items` items. */
export function checkDeliveries(run: QueueRun, producers: number, items: number): Delivery {
  const expected = itemsPerProducer(items, producers);
  const seen = expected.map((n) => new Array<number>(n).fill(0));
  let unknown = 0;
  let outOfOrder = 0;
  for (const consumer of run.received) {
    const last = new Array<number>(producers).fill(-1);
    for (const [p, s] of consumer) {
      if (!Number.isInteger(p) || !Number.isInteger(s) || p < 0 || p >= producers || s < 0 || s >= expected[p]) {
        unknown++;
        continue;
      }
      seen[p][s]++;
      if (s < last[p]) outOfOrder++;
      last[p] = Math.max(last[p], s);
    }
  }
  let lost = 0;
  let duplicated = 0;
  for (const counts of seen) {
    for (const c of counts) {
      if (c === 0) lost++;
      else duplicated += c - 1;
    }
  }
  return { lost, duplicated, unknown, outOfOrder };
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const { quick } = ctx.options;
  const sizes = ctx.options.queueSizes;
  const rounds = ctx.options.rounds ?? (quick ? 1 : 3);
  const itemsOf = (size: number) => ctx.options.queueItems ?? (quick ? 50 : Math.max(2_000, 1_000 * size));
  const warmupItems = (size: number) => (quick ? 0 : Math.min(itemsOf(size), 200));
  const peers = ctx.peers.filter((p): p is QueuePeer => p.usesZooKeeper && p.queuePrepare !== undefined && p.queueRun !== undefined);
  const checks = new Map<string, { runs: number; bad: string[] }>();
  const { results, failed, failures, median: medianOf } = await runSizedRounds<QueuePeer, QueueRun, RunFigures>(ctx, {
    name: 'queue',
    sizes,
    rounds,
    peers,
    label: (size) => `${size} × ${size}`,
    describe: (size, round) => `${size} producers × ${size} consumers, ${itemsOf(size)} items, round ${round + 1}/${rounds}`,
    sessions: (size) => 2 * size,
    prepare: async (peer, path, size, round) => {
      if (round === 0 && warmupItems(size) > 0) {
        await peer.queuePrepare(`${path}-warmup`, size, size, warmupItems(size));
        await peer.queueRun();
      }
      await peer.queuePrepare(path, size, size, itemsOf(size));
    },
    measure: (peer) => peer.queueRun(),
    check: (run, peer, size) => {
      const items = itemsOf(size);
      const d = checkDeliveries(run, size, items);
      const key = `${size}/${peer.id}`;
      const c = checks.get(key) ?? { runs: 0, bad: [] };
      c.runs++;
      const bad = [
        d.lost ? `${d.lost} lost` : '',
        d.duplicated ? `${d.duplicated} duplicated` : '',
        d.unknown ? `${d.unknown} unknown` : '',
        size === 1 && d.outOfOrder ? `${d.outOfOrder} out of order` : '',
      ].filter(Boolean);
      c.bad.push(...bad);
      checks.set(key, c);
      return bad.length > 0 ? `${bad.join(', ')} of ${items} items` : undefined;
    },
    figures: ({ value, packets }, size) => ({ itemsPerSec: (itemsOf(size) / value.elapsedMs) * 1000, packetsPerItem: packets / itemsOf(size) }),
  });

  const throughput = (size: number, id: PeerId) => medianOf(size, id, (x) => x.itemsPerSec);
  const vs = (size: number, other: PeerId) => ratio(throughput(size, 'zk-recipes'), throughput(size, other));
  const rows: string[][] = [];
  for (const size of sizes) {
    for (const peer of peers) {
      const list = results.get(`${size}/${peer.id}`) ?? [];
      const c = checks.get(`${size}/${peer.id}`);
      rows.push([
        `${size} × ${size}`,
        peer.label + (failed.has(`${size}/${peer.id}`) ? ' (failed)' : ''),
        itemsOf(size).toLocaleString('en-US'),
        fmtNum(throughput(size, peer.id)),
        fmtNum(median(list.map((x) => x.packetsPerItem))),
        !c ? 'n/a' : c.bad.length === 0 ? `exactly once${size === 1 ? ', in order' : ''}, ${c.runs} run(s)` : `**${c.bad.join(', ')}**`,
        peer.id === 'zk-recipes' ? '1.00×' : fmtRatio(vs(size, peer.id)),
      ]);
    }
  }
  const bars: RatioBar[] = sizes.flatMap((size): RatioBar[] => [
    { metric: `queue ${size}×${size}`, versus: 'curator', ratio: vs(size, 'curator'), better: 'higher' },
    { metric: `queue ${size}×${size}`, versus: 'kazoo', ratio: vs(size, 'kazoo'), better: 'higher' },
  ]);
  const ratioLines = sizes.map((size) => `${size} × ${size}: zk-recipes ÷ Curator ${fmtRatio(vs(size, 'curator'))}, zk-recipes ÷ kazoo ${fmtRatio(vs(size, 'kazoo'))}`);

  const markdown = [
    '## 6. Distributed queue: throughput',
    '',
    `N producers and N consumers, each in its own session (all of a library's in one process), share one queue path; the producers put M items in all, spread evenly, each naming its producer and its sequence, and the consumers take them. Throughput is M ÷ the time from the first put to the last item consumed, on that process's clock (median of rounds, machine-dependent). Consumers start listening before the measured run, and the run starts once the server is quiet. ${rounds} round(s) per size, libraries interleaved; ${quick ? 'no warm-up' : 'the first round of each size is preceded by an unmeasured run of 200 items'}. Server packets (zk_packets_received + zk_packets_sent, from \`srvr\`, around the run) are per item.`,
    '',
    "Each library in its natural usage and its at-most-once mode (an item is deleted as it is taken, so it is never delivered twice and is lost if its consumer dies): zk-recipes `DistributedQueue` without a `lockPath` (its default; not the lock-safe, at-least-once mode), consumed with `start(handler)` one item at a time, produced with `await put()` in a loop; Curator `DistributedQueue` built by `QueueBuilder` with its defaults (no lock path; puts in the background, so a producer does not wait for each create; a `QueueConsumer` called on the direct executor) and a UTF-8 `QueueSerializer<String>` of ours; kazoo `Queue` with `put()` and `get()`, which returns None on an empty queue, so its consumers poll, sleeping 5 ms after an empty `get()`. Delivery check: every item consumed exactly once, and at 1 × 1 in the order it was put.",
    '',
    mdTable(['producers × consumers', 'library', 'items', 'items / s (machine-dependent)', 'server packets / item', 'delivery', 'zk-recipes ÷ this'], rows, [2, 3, 4, 6]),
    '',
    `**Ratios (higher is better):** ${ratioLines.join('; ')}.`,
  ].join('\n');
  return { markdown, goals: [], bars, failures };
}

export const scenario: Scenario = { name: 'queue', order: 6, title: 'Queue throughput', run };
