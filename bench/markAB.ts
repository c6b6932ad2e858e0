/**
 * Lock hand-off, two designs A/B on the raw-socket floor's session (peers/rawFloor.ts): the design
 * measurement behind the library's hand-off mark (recipes/locks/handOffMark.ts), made on a client
 * with no layering of its own before the mark was written in the library. The library's mark
 * differs: it rewrites the node's own data at version 0, and only once a hold has outlasted the
 * turn it was won in (see that file).
 *
 *  - relist (today's design): on the deletion of the node ahead, list the parent again, and hold
 *    if nothing sorts before ours. Exception: if the node ahead was the only one before ours in
 *    our last listing, its deletion alone proves ours first (hold, no listing).
 *  - mark: the same, plus: a holder, as soon as it holds, sends setData(own node, "zkr:held", -1)
 *    without waiting for the reply. A waiter that has read the marker on its predecessor holds on
 *    that node's NodeDeleted, with no listing. On NodeDataChanged (the marker arriving) it reads
 *    again with getData + watch; if that read finds the node gone (NONODE), or the deleted node
 *    was never seen marked, it relists as above.
 *
 * Per variant and round: a holder takes the lock, W waiters queue behind it over --sessions
 * sessions, and once every waiter's first getData has come back (its watch set), the holder
 * releases and the lock passes down the queue, each waiter holding --holds ms (a timer) before it
 * deletes its node. Hand-off latency is from one holder's release to the next one's acquire
 * returning. The variants run interleaved, round by round. Reads are `watchDataInline`, whose reply
 * is seen before a NodeDeleted that came in the same socket read: with `watchData` a mark read just
 * before the deletion would be noted only after the deletion had been handled.
 *
 * Known limits. At 0 ms hold the marker's setData and the delete leave back to back: the waiter's
 * re-read (after NodeDataChanged) finds NONODE and it relists, paying the getData and setData on top
 * of today's listing. Only with a hold long enough for the re-read to come back (1 ms here) does
 * the marked path, with no listing, carry the hand-off. One server, one client process.
 *
 *   node -r ts-node/register/transpile-only bench/markAB.ts [--waiters 100,1000] [--holds 0,1] [--rounds 3] [--sessions 4] [--connect host:port]
 *
 * Without --connect it starts a standalone server (as bench/floorAB.ts does) and stops it at the
 * end. Prints one line per run, then tables: hand-off latency (median over rounds of each run's
 * p50 and p99, and mark ÷ relist), requests written per hand-off by op, and how each waiter woke
 * and held. Exits non-zero if any two holds overlapped or the lock was taken out of order.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { external, startStandalone, type Deployment } from './deployment';
import { queueHandoff } from './peers/handoffQueue';
import {
  EVENT_NODE_DELETED,
  FLAG_EPHEMERAL_SEQUENTIAL,
  nodeAhead,
  OP_CREATE2,
  OP_DELETE,
  OP_GET_CHILDREN2,
  OP_GET_DATA,
  OP_SET_DATA,
  RawZkSession,
} from './peers/rawFloor';
import { connectStringOf } from './peers/types';
import { handoffLatencies } from './scenarios/handoff';
import { fmt, median, pct } from './stats';
import { runToExit } from './script';

const SESSION_TIMEOUT_MS = 30_000;
/** How long the W waiters may take to queue. */
const QUEUE_TIMEOUT_MS = 60_000;
/** Quiet time between the last waiter queuing and the release. */
const SETTLE_MS = 200;
const MARK = Buffer.from('zkr:held');
const EMPTY = Buffer.alloc(0);
/** The ops of the requests table, in its column order (pings and closeSession are left out). */
const OPS_SHOWN: ReadonlyArray<[name: string, op: number]> = [
  ['create2', OP_CREATE2],
  ['getChildren2', OP_GET_CHILDREN2],
  ['getData', OP_GET_DATA],
  ['setData', OP_SET_DATA],
  ['delete', OP_DELETE],
];

type Variant = 'relist' | 'mark';
const VARIANTS: readonly Variant[] = ['relist', 'mark'];

/** Why each acquire ended (one per acquire), and what each wake-up led to. */
type Reason =
  | 'hold:marked' // mark: the deleted node was seen marked
  | 'hold:sole-ahead' // the only node ahead in our last listing was deleted
  | 'hold:relisted' // a relist showed nothing ahead
  | 'hold:first-listing' // nothing ahead in the create+list reply
  | 'relist:unmarked-delete' // NodeDeleted on a node never seen marked, not the sole one ahead
  | 'relist:reread-nonode' // mark: NodeDataChanged, then the re-read found the node gone
  | 'relist:initial-nonode' // the first getData found the node already gone
  | 'wait:still-ahead'; // a relist still showed a node ahead
const REASONS: readonly Reason[] = ['hold:marked', 'hold:sole-ahead', 'hold:relisted', 'hold:first-listing', 'relist:unmarked-delete', 'relist:reread-nonode', 'relist:initial-nonode', 'wait:still-ahead'];

type Tally = Map<Reason, number>;
function tallyAdd(t: Tally, r: Reason): void {
  t.set(r, (t.get(r) ?? 0) + 1);
}

interface Acquired {
  path: string;
  /** mark: the marker's setData reply; undefined for relist. */
  marked?: Promise<void>;
}

/** How the wait on the node ahead ended, and whether that node had been seen marked. */
interface WaitOutcome {
  marked: boolean;
  how: 'event' | 'initial-nonode' | 'reread-nonode';
}

/** Waits for `path` to go: a getData watch on it, read again on each NodeDataChanged. */
function awaitDeletion(s: RawZkSession, path: string, variant: Variant, arm: () => void): Promise<WaitOutcome> {
  return new Promise<WaitOutcome>((resolve, reject) => {
    let marked = false;
    let reads = 0;
    const read = () => {
      const initial = reads++ === 0;
      // The reply is handled in the frame handler, so a NodeDeleted that arrives in the same socket
      // read as a re-read's reply is handled after the marker has been noted.
      s.watchDataInline(path, onEvent, (d) => {
        if (d === null) {
          resolve({ marked, how: initial ? 'initial-nonode' : 'reread-nonode' });
          return;
        }
        if (variant === 'mark' && d.equals(MARK)) marked = true;
        arm();
      }).catch(reject);
    };
    const onEvent = (type: number) => {
      if (type === EVENT_NODE_DELETED) resolve({ marked, how: 'event' });
      else read(); // NodeDataChanged (the marker): read again, with a new watch
    };
    read();
  });
}

/**
 * Takes the mutex under `parent`. `onArmed` is called once: when the first watch on a node ahead
 * is set (its getData reply came back with the node there), or when the lock is held at once.
 */
async function acquire(s: RawZkSession, parent: string, variant: Variant, tally: Tally, onArmed: () => void): Promise<Acquired> {
  const [ours, first] = await s.createAndList(`${parent}/_c_${randomUUID()}-lock-`, EMPTY, FLAG_EPHEMERAL_SEQUENTIAL, parent);
  const ourName = ours.slice(parent.length + 1);
  let children = first;
  let armed = false;
  const arm = () => {
    if (!armed) {
      armed = true;
      onArmed();
    }
  };
  let reason: Reason = 'hold:first-listing';
  for (;;) {
    const ahead = nodeAhead(children, ourName);
    if (ahead === undefined) break;
    // Nothing sorts before the node ahead: it is the only one before ours.
    const soleAhead = nodeAhead(children, ahead) === undefined;
    const outcome = await awaitDeletion(s, `${parent}/${ahead}`, variant, arm);
    if (variant === 'mark' && outcome.marked) {
      reason = 'hold:marked';
      break;
    }
    if (soleAhead) {
      reason = 'hold:sole-ahead';
      break;
    }
    tallyAdd(tally, outcome.how === 'event' ? 'relist:unmarked-delete' : outcome.how === 'reread-nonode' ? 'relist:reread-nonode' : 'relist:initial-nonode');
    children = await s.getChildren(parent);
    if (nodeAhead(children, ourName) === undefined) {
      reason = 'hold:relisted';
      break;
    }
    tallyAdd(tally, 'wait:still-ahead');
  }
  tallyAdd(tally, reason);
  arm();
  if (variant === 'mark') {
    // Pipelined: the hold starts now; the reply is not awaited.
    const marked = s.setData(ours, MARK);
    marked.catch(() => undefined);
    return { path: ours, marked };
  }
  return { path: ours };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

interface RunResult {
  p50: number;
  p99: number;
  handoffs: number;
  /** The hold counter's: a hold entered while another was inside, or before the first release. */
  violations: number;
  /** From the timestamps: a hold that began before the previous one ended. */
  overlaps: number;
  /** A hold taken by a node that sorts before the previous holder's. */
  outOfOrder: number;
  /** Frames written in the measured window, by OpCode, all sessions. */
  requests: Map<number, number>;
  reasons: Tally;
}

interface RunSpec {
  variant: Variant;
  waiters: number;
  holdMs: number;
  sessions: number;
  parent: string;
}

async function runOnce(deployment: Deployment, spec: RunSpec): Promise<RunResult> {
  const { variant, waiters, holdMs, parent } = spec;
  const requests = new Map<number, number>();
  const sessions = await Promise.all(Array.from({ length: spec.sessions }, (_, k) => RawZkSession.open(connectStringOf(deployment.spread, k), SESSION_TIMEOUT_MS, requests)));
  let timer: NodeJS.Timeout | undefined;
  try {
    await sessions[0].ensurePath(parent);
    const tally: Tally = new Map();
    const seqs = new Array<string>(waiters + 1).fill('');
    let armedCount = 0;
    let allArmed: () => void = () => undefined;
    const armedP = new Promise<void>((r) => (allArmed = r));
    const onArmed = () => {
      if (++armedCount === waiters) allArmed();
    };
    // The holder (k = 0) waits for its marker's reply, so that the first waiter reads it marked.
    // A waiter that holds before the holder's release is an overlap for the queue's counter.
    const queued = await queueHandoff(waiters, holdMs, async (k) => {
      const s = sessions[k === 0 ? 0 : (k - 1) % sessions.length];
      const got = await acquire(s, parent, variant, k === 0 ? new Map() : tally, k === 0 ? () => undefined : onArmed);
      if (k === 0 && got.marked) await got.marked;
      seqs[k] = got.path.slice(-10);
      return () => s.delete(got.path);
    });
    const queueTimeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`only ${armedCount}/${waiters} waiters queued in ${QUEUE_TIMEOUT_MS} ms`)), QUEUE_TIMEOUT_MS);
    });
    await Promise.race([armedP, queued.settled, queueTimeout]);
    clearTimeout(timer);
    await sleep(SETTLE_MS);
    // What the queuing did is not a hand-off: count from the release on.
    tally.clear();
    requests.clear();

    const run = await queued.run();
    const sent = new Map(requests);
    const { latencies, overlaps } = handoffLatencies(run);
    const order = run.acquiredUs.map((_, i) => i).sort((x, y) => run.acquiredUs[x] - run.acquiredUs[y]);
    let outOfOrder = 0;
    for (let j = 1; j < order.length; j++) if (seqs[order[j]] <= seqs[order[j - 1]]) outOfOrder++;
    await sessions[0].delete(parent).catch(() => undefined);
    return { p50: pct(latencies, 50), p99: pct(latencies, 99), handoffs: latencies.length, violations: run.violations, overlaps, outOfOrder, requests: sent, reasons: tally };
  } finally {
    clearTimeout(timer);
    await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  }
}

function list(value: string): number[] {
  return value.split(',').map(Number);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      waiters: { type: 'string', default: '100,1000' },
      holds: { type: 'string', default: '0,1' },
      rounds: { type: 'string', default: '3' },
      sessions: { type: 'string', default: '4' },
      connect: { type: 'string' },
    },
  });
  const sizes = list(values.waiters);
  const holds = list(values.holds);
  const rounds = Number(values.rounds);
  const sessions = Number(values.sessions);
  const deployment = values.connect ? external(values.connect) : await startStandalone();
  const stamp = Date.now();
  const t0 = Date.now();
  const results = new Map<string, RunResult[]>();
  const runsOf = (W: number, H: number, v: Variant) => results.get(`${W}/${H}/${v}`) ?? [];
  try {
    console.log(
      `server ${values.connect ?? `standalone (${deployment.connectString})`}; waiters ${sizes.join(',')}; hold ms ${holds.join(',')}; ${rounds} round(s); ${sessions} sessions; node ${process.version}`,
    );
    // Warm-up, not measured: one small run of each variant.
    for (const variant of VARIANTS) {
      await runOnce(deployment, { variant, waiters: Math.min(100, ...sizes), holdMs: 0, sessions, parent: `/markAB-${stamp}-warmup-${variant}` });
    }
    for (const W of sizes) {
      for (const H of holds) {
        for (let round = 0; round < rounds; round++) {
          for (const variant of VARIANTS) {
            const r = await runOnce(deployment, { variant, waiters: W, holdMs: H, sessions, parent: `/markAB-${stamp}-W${W}-H${H}-${variant}-${round}` });
            const key = `${W}/${H}/${variant}`;
            results.set(key, [...runsOf(W, H, variant), r]);
            console.log(
              `  W=${W} H=${H} ${variant.padEnd(6)} round ${round + 1}: p50 ${fmt(r.p50, 0)} µs, p99 ${fmt(r.p99, 0)} µs, hand-offs ${r.handoffs}, violations ${r.violations}, ts-overlaps ${r.overlaps}, out-of-order ${r.outOfOrder}`,
            );
          }
        }
      }
    }
  } finally {
    await deployment.close();
  }

  /** One row per W, hold and variant. */
  const rows = (cells: (rs: RunResult[], W: number, H: number, v: Variant) => string[]) => {
    for (const W of sizes) for (const H of holds) for (const v of VARIANTS) console.log(`| ${[W, H, v, ...cells(runsOf(W, H, v), W, H, v)].join(' | ')} |`);
  };
  const header = (columns: readonly string[]) => {
    console.log(`| W | H ms | variant | ${columns.join(' | ')} |`);
    console.log(`|${'---|'.repeat(3 + columns.length)}`);
  };
  const sum = (rs: RunResult[], f: (r: RunResult) => number) => rs.reduce((a, r) => a + f(r), 0);
  /** Per waiter, mean over rounds. */
  const perWaiter = (rs: RunResult[], W: number, f: (r: RunResult) => number) => sum(rs, f) / W / rs.length;

  console.log("\n## Hand-off latency (µs; median over rounds of each run's p50/p99)\n");
  header(['p50', 'p99', 'p50 per round', 'overlaps (counter/timestamps)', 'out-of-order', 'mark ÷ relist p50', 'mark ÷ relist p99']);
  rows((rs, W, H, v) => {
    const p50 = median(rs.map((r) => r.p50));
    const p99 = median(rs.map((r) => r.p99));
    const rel = runsOf(W, H, 'relist');
    const ratio = (x: number, of: (r: RunResult) => number) => (v === 'mark' ? `${fmt(x / median(rel.map(of)), 2)}×` : '');
    return [
      fmt(p50, 0),
      fmt(p99, 0),
      rs.map((r) => fmt(r.p50, 0)).join(' / '),
      `${sum(rs, (r) => r.violations)}/${sum(rs, (r) => r.overlaps)}`,
      String(sum(rs, (r) => r.outOfOrder)),
      ratio(p50, (r) => r.p50),
      ratio(p99, (r) => r.p99),
    ];
  });

  console.log("\n## Requests sent per hand-off, by op (frames written from the first release to the last waiter's release, ÷ W; mean over rounds)\n");
  header([...OPS_SHOWN.map(([name]) => name), 'total (excl. ping)']);
  rows((rs, W) => {
    const per = OPS_SHOWN.map(([, op]) => perWaiter(rs, W, (r) => r.requests.get(op) ?? 0));
    return [...per.map((x) => fmt(x, 3)), fmt(per.reduce((a, b) => a + b, 0), 3)];
  });

  console.log('\n## How each waiter woke and held (per hand-off, mean over rounds)\n');
  header(REASONS);
  rows((rs, W) => REASONS.map((k) => fmt(perWaiter(rs, W, (r) => r.reasons.get(k) ?? 0), 3)));

  const all = [...results.values()].flat();
  const bad = sum(all, (r) => r.violations + r.overlaps + r.outOfOrder);
  console.log(`\nelapsed ${fmt((Date.now() - t0) / 1000)} s`);
  if (bad > 0) throw new Error(`${bad} overlapping or out-of-order holds`);
}

runToExit(main);
