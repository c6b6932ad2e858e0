/**
 * Scene 1: fair FIFO locking. Four workers take one InterProcessMutex again and again. ZooKeeper
 * numbers their requests (the lock nodes' sequence); the lock goes to them in that order, each
 * with a fencing token larger than the last.
 */
import { locksCommand, type LocksReport } from '../../cli/locks';
import { table } from '../../cli/format';
import { overlaps, type Span } from '../checks';
import { follow } from '../follow';
import { now, type WorkerEvent } from '../protocol';
import { pick, type SceneContext, type SceneResult } from './scene';

type Granted = Extract<WorkerEvent, { event: 'granted' }>;

/** A worker's request as the lock's node sequence shows it, and when it was granted and released. */
interface Grant {
  readonly who: string;
  readonly sequence: number;
  readonly token: bigint;
  readonly at: number;
  readonly askedAt: number;
  readonly releasedAt: number;
}

function queueLine(report: LocksReport | undefined): string {
  if (!report || report.holders.length === 0) return 'free';
  const name = (n: { data: { value: string } | null }) => n.data?.value ?? '?';
  const waiting = report.waiting.map(name);
  return `holder ${name(report.holders[0])}${waiting.length > 0 ? `  │  waiting ${waiting.join(' → ')}` : ''}`;
}

function hex(token: bigint): string {
  return `0x${token.toString(16)}`;
}

export async function fifoScene(ctx: SceneContext): Promise<SceneResult> {
  const { printer, quick } = ctx;
  const names = ['w1', 'w2', 'w3', 'w4'];
  const workers = pick(ctx, names);
  const rounds = quick ? 2 : 3;
  const holdMs = quick ? 60 : 250;
  const path = `${ctx.root}/fifo/lock`;
  // A persistent lock node, not a container: a container emptied between rounds could be reaped
  // and re-created, and its sequence (the request order shown here) would start again at 0.
  await ctx.client.ensurePath(path);
  printer.heading(`1. Fair FIFO locking: InterProcessMutex at ${path}`, [
    `${names.join(', ')} each take the lock ${rounds} times, hold it ${holdMs} ms and ask again.`,
    'ZooKeeper numbers the requests (the lock nodes); the lock goes to them in that order,',
    "each holder with a fencing token larger than the last holder's. 'zk' lines are what",
    "`zk-recipes watch locks` sees: the holder and the line behind it.",
  ]);

  const stopFollowing = new AbortController();
  const following = AbortSignal.any([stopFollowing.signal, ctx.signal]);
  await follow(ctx.client, locksCommand, path, following, (report) => printer.event(now(), 'zk', queueLine(report)));

  const marks = workers.map((w) => w.events.length);
  const listeners = workers.map((w) => {
    const onEvent = (e: WorkerEvent) => {
      if (e.event === 'granted') printer.event(e.at, w.name, `granted, fencing token ${hex(BigInt(e.token))}  (request ${Number(e.node.slice(-10)) + 1})`);
      if (e.event === 'overlap') printer.event(e.at, w.name, `OVERLAP: another holder's guard node was there`);
    };
    w.emitter.on('event', onEvent);
    return () => w.emitter.off('event', onEvent);
  });
  try {
    for (const w of workers) w.send({ op: 'mutex', path, rounds, holdMs, thinkMs: holdMs, guardPath: `${ctx.root}/fifo/guard` });
    await Promise.all(workers.map((w, i) => w.waitFor('mutexDone', ctx.waitMs, marks[i])));
  } finally {
    listeners.forEach((off) => off());
    stopFollowing.abort();
  }

  // Pair each worker's events: asked, granted, released, in order.
  const grants: Grant[] = [];
  let overlapEvents = 0;
  workers.forEach((w, i) => {
    let askedAt = 0;
    let granted: Granted | undefined;
    for (const e of w.events.slice(marks[i])) {
      if (e.event === 'asked') askedAt = e.at;
      else if (e.event === 'granted') granted = e;
      else if (e.event === 'overlap') overlapEvents++;
      else if (e.event === 'released' && granted) {
        grants.push({ who: w.name, sequence: Number(granted.node.slice(-10)), token: BigInt(granted.token), at: granted.at, askedAt, releasedAt: e.at });
        granted = undefined;
      }
    }
  });
  const byRequest = [...grants].sort((a, b) => a.sequence - b.sequence);
  const byToken = [...grants].sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
  const byTime = [...grants].sort((a, b) => a.at - b.at);
  const fifo = byRequest.every((g, i) => g === byToken[i]);
  const tokensGrow = byTime.every((g, i) => i === 0 || g.token > byTime[i - 1].token);
  const spans: Span[] = grants.map((g) => ({ who: g.who, from: g.at, to: g.releasedAt }));
  const overlapping = overlaps(spans);

  printer.line();
  printer.line(`  ${printer.bold('Requests and grants side by side')}`);
  const rows = byRequest.map((g, i) => {
    const t = byToken[i];
    return [`${i + 1}`, `lock-${String(g.sequence).padStart(10, '0')}`, g.who, '│', `${i + 1}`, t.who, hex(t.token), `${Math.round(t.at - t.askedAt)} ms`, g === t ? '✓' : '✗'];
  });
  for (const l of table([['#', 'REQUEST (NODE ORDER)', 'BY', '│', '#', 'GRANT', 'FENCING TOKEN', 'WAITED', ''], ...rows])) printer.line(`  ${l}`);
  printer.line();
  const ok = fifo && tokensGrow && overlapping.length === 0 && overlapEvents === 0;
  const facts = [
    fifo ? `${grants.length} grants in request order` : 'grants OUT of request order',
    overlapping.length === 0 && overlapEvents === 0 ? 'no overlapping holds' : `${overlapping.length + overlapEvents} OVERLAPPING holds`,
    tokensGrow ? 'fencing tokens strictly increasing' : 'fencing tokens NOT increasing',
  ];
  printer.line(`  ${facts.join('; ')}.`);
  return { title: 'fair FIFO locking', ok, summary: facts.join('; ') };
}
