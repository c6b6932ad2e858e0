/**
 * Scene 2: readers share an InterProcessReadWriteLock while a writer waits its turn. Two readers
 * hold; a writer asks and waits; a reader that asks after the writer queues behind it (fair: no
 * reader slips ahead of a waiting writer); the readers leave, the writer writes alone, then the
 * last reader reads.
 */
import { locksCommand, type LockNode, type LocksReport } from '../../cli/locks';
import { anyTogether, overlaps, seconds, type Span } from '../checks';
import { follow } from '../follow';
import { now, type WorkerEvent } from '../protocol';
import { timeline, type ActivitySpan } from '../timeline';
import type { Worker } from '../workers';
import { pick, type SceneContext, type SceneResult } from './scene';

function lockLine(report: LocksReport | undefined): string {
  if (!report || report.holders.length === 0) return 'free';
  const name = (n: LockNode) => `${n.data?.value ?? '?'} (${n.mode})`;
  const waiting = report.waiting.map(name);
  const holders = report.holders.map((n) => n.data?.value ?? '?');
  const held = report.holders[0].mode === 'write' ? `writer ${holders[0]}` : `readers ${holders.join(', ')}`;
  return `${held}${waiting.length > 0 ? `  │  waiting ${waiting.join(' → ')}` : ''}`;
}

export async function readWriteScene(ctx: SceneContext): Promise<SceneResult> {
  const { printer, quick } = ctx;
  const [r1, r2, writer, r3] = pick(ctx, ['w1', 'w2', 'w3', 'w4']);
  const holdMs = quick ? 250 : 1_000;
  const path = `${ctx.root}/rw/lock`;
  printer.heading(`2. Readers share, a writer waits its turn: InterProcessReadWriteLock at ${path}`, [
    `${r1.name} and ${r2.name} read together; ${writer.name} asks to write and waits for them; ${r3.name} asks to read`,
    `after ${writer.name} asked, so it queues behind the writer instead of slipping in with the readers.`,
  ]);

  const marks = new Map([r1, r2, writer, r3].map((w) => [w, w.events.length]));
  let latest: LocksReport | undefined;
  let changed: () => void = () => undefined;
  const stopFollowing = new AbortController();
  await follow(ctx.client, locksCommand, path, AbortSignal.any([stopFollowing.signal, ctx.signal]), (report) => {
    latest = report;
    printer.event(now(), 'zk', lockLine(report));
    changed();
  });
  /** Waits until the lock's nodes show `test`. */
  const until = (what: string, test: (r: LocksReport) => boolean) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the read-write lock never showed ${what}`)), ctx.waitMs);
      changed = () => {
        if (latest && test(latest)) {
          clearTimeout(timer);
          changed = () => undefined;
          resolve();
        }
      };
      changed();
    });
  const waitingFor = (w: Worker) => (r: LocksReport) => r.waiting.some((n) => n.data?.value === w.name);
  const acquire = async (w: Worker, mode: 'read' | 'write') => {
    const from = w.events.length;
    w.send({ op: 'rw.acquire', path, mode });
    return w.waitFor('granted', ctx.waitMs, from);
  };
  const release = async (w: Worker) => {
    const from = w.events.length;
    w.send({ op: 'rw.release' });
    await w.waitFor('released', ctx.waitMs, from);
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  try {
    const [g1, g2] = await Promise.all([acquire(r1, 'read'), acquire(r2, 'read')]);
    printer.event(Math.max(g1.at, g2.at), `${r1.name}+${r2.name}`, 'both read at once');
    const writing = acquire(writer, 'write');
    await until(`${writer.name} waiting`, waitingFor(writer));
    printer.event(now(), writer.name, `waits to write: ${r1.name} and ${r2.name} hold the read lock`);
    const lateRead = acquire(r3, 'read');
    await until(`${r3.name} waiting`, waitingFor(r3));
    printer.event(now(), r3.name, `waits to read: ${writer.name} asked first`);
    await pause(holdMs);
    await release(r1);
    await pause(holdMs / 2);
    await release(r2);
    const w = await writing;
    printer.event(w.at, writer.name, 'writes, alone');
    await pause(holdMs);
    await release(writer);
    const late = await lateRead;
    printer.event(late.at, r3.name, 'reads, after the writer');
    await pause(holdMs / 2);
    await release(r3);
  } finally {
    stopFollowing.abort();
  }

  // What each worker did, from its own reports.
  const rows: Array<{ who: string; spans: ActivitySpan[] }> = [];
  const holds: Array<Span & { mode: 'read' | 'write' }> = [];
  for (const w of [r1, r2, writer, r3]) {
    const spans: ActivitySpan[] = [];
    let asked = 0;
    let granted: Extract<WorkerEvent, { event: 'granted' }> | undefined;
    for (const e of w.events.slice(marks.get(w))) {
      if (e.event === 'asked') asked = e.at;
      if (e.event === 'granted') {
        granted = e;
        spans.push({ from: asked, to: e.at, activity: 'wait' });
      }
      if (e.event === 'released' && granted) {
        const mode = granted.mode ?? 'read';
        spans.push({ from: granted.at, to: e.at, activity: mode });
        holds.push({ who: w.name, from: granted.at, to: e.at, shared: mode === 'read', mode });
        granted = undefined;
      }
    }
    rows.push({ who: w.name, spans });
  }
  const start = Math.min(...rows.flatMap((r) => r.spans.map((s) => s.from)));
  const end = Math.max(...rows.flatMap((r) => r.spans.map((s) => s.to)));
  printer.line();
  printer.line(`  ${printer.bold('Timeline')} ${printer.dim(`(${seconds(end - start)}; R read, W write, · waiting)`)}`);
  for (const l of timeline(rows, start, end, 60)) printer.line(`  ${l}`);
  printer.line();

  const bad = overlaps(holds);
  const readersShared = anyTogether(holds.filter((h) => h.who === r1.name || h.who === r2.name));
  const writerHold = holds.find((h) => h.mode === 'write');
  const lateHold = holds.find((h) => h.who === r3.name);
  const fair = writerHold !== undefined && lateHold !== undefined && lateHold.from >= writerHold.to;
  const facts = [
    readersShared ? 'readers held together' : 'readers did NOT overlap',
    bad.length === 0 ? 'the writer held alone' : `${bad.length} OVERLAPS with the writer`,
    fair ? 'the late reader waited for the writer' : 'the late reader did NOT wait for the writer',
  ];
  printer.line(`  ${facts.join('; ')}.`);
  return { title: 'read-write lock', ok: readersShared && bad.length === 0 && fair, summary: facts.join('; ') };
}
