/**
 * Scene 3: leader election with LeaderLatch. Three workers join; the leader's process is killed
 * (SIGKILL, a crash) and another takes over once ZooKeeper expires the dead session; then the new
 * leader is stopped cleanly (SIGTERM) and the last one takes over at once.
 */
import { observeLeader } from '../../recipes/leader';
import { overlaps, seconds, type Span } from '../checks';
import { now } from '../protocol';
import type { Worker } from '../workers';
import { pick, type SceneContext, type SceneResult } from './scene';

export async function leaderScene(ctx: SceneContext, sessionTimeoutMs: number): Promise<SceneResult> {
  const { printer, quick } = ctx;
  const workers = pick(ctx, ['w5', 'w6', 'w7']);
  const leadMs = quick ? 500 : 2_000;
  const path = `${ctx.root}/leader`;
  printer.heading(`3. Leader election: LeaderLatch at ${path}`, [
    `${workers.map((w) => w.name).join(', ')} join the election. The leader's process is killed (SIGKILL): its node stays`,
    `until ZooKeeper expires its session (session timeout ${seconds(sessionTimeoutMs)}), then the next in line leads.`,
    "Then that leader stops cleanly (SIGTERM): it deletes its node and the last one leads at once. 'zk' lines",
    'are what observeLeader, a watcher that takes no part, reports.',
  ]);

  const stopObserving = new AbortController();
  const observing = (async () => {
    for await (const leader of observeLeader(ctx.client, path, { signal: AbortSignal.any([stopObserving.signal, ctx.signal]) })) {
      printer.event(now(), 'zk', leader ? `leader is ${leader.id}` : 'no leader');
    }
  })().catch(() => undefined);

  const spans: Span[] = [];
  const leadingSince = new Map<Worker, number>();
  const listeners = workers.map((w) => {
    const onEvent = (e: { event: string; at?: number }) => {
      if (e.event === 'isLeader' && e.at !== undefined) {
        leadingSince.set(w, e.at);
        printer.event(e.at, w.name, 'leads');
      }
      if (e.event === 'notLeader' && e.at !== undefined) endLeadership(w, e.at);
    };
    w.emitter.on('event', onEvent);
    return () => w.emitter.off('event', onEvent);
  });
  const endLeadership = (w: Worker, at: number) => {
    const since = leadingSince.get(w);
    if (since === undefined) return;
    leadingSince.delete(w);
    spans.push({ who: w.name, from: since, to: at });
  };
  /** The next worker among `candidates` to report isLeader from now on. */
  const nextLeader = (candidates: readonly Worker[]) =>
    new Promise<{ worker: Worker; at: number }>((resolve, reject) => {
      const offs: Array<() => void> = [];
      const done = () => {
        clearTimeout(timer);
        offs.forEach((off) => off());
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`none of ${candidates.map((w) => w.name).join(', ')} became leader within ${seconds(ctx.waitMs)}`));
      }, ctx.waitMs);
      for (const worker of candidates) {
        const onEvent = (e: { event: string; at?: number }) => {
          if (e.event !== 'isLeader') return;
          done();
          resolve({ worker, at: e.at ?? now() });
        };
        worker.emitter.on('event', onEvent);
        offs.push(() => worker.emitter.off('event', onEvent));
      }
    });
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  let crashFailoverMs = NaN;
  let cleanFailoverMs = NaN;
  try {
    const [first, ...rest] = workers;
    const firstLeads = nextLeader([first]);
    first.send({ op: 'latch', path, id: first.name });
    await firstLeads;
    for (const w of rest) w.send({ op: 'latch', path, id: w.name });
    await pause(leadMs);

    const afterCrash = nextLeader(rest);
    const killedAt = now();
    printer.event(killedAt, first.name, 'killed (SIGKILL): a crash, its node stays until its session expires');
    first.kill('SIGKILL');
    endLeadership(first, killedAt);
    const second = await afterCrash;
    crashFailoverMs = second.at - killedAt;
    printer.event(second.at, second.worker.name, `took over ${seconds(crashFailoverMs)} after the crash`);
    await pause(leadMs);

    const last = rest.filter((w) => w !== second.worker);
    const afterStop = nextLeader(last);
    const stoppedAt = now();
    printer.event(stoppedAt, second.worker.name, 'stopped (SIGTERM): it closes its latch, which deletes its node');
    second.worker.kill('SIGTERM');
    const third = await afterStop;
    cleanFailoverMs = third.at - stoppedAt;
    printer.event(third.at, third.worker.name, `took over ${seconds(cleanFailoverMs)} after the clean stop`);
    await second.worker.exited;
    // A worker that exited leads no more, whatever it managed to report.
    endLeadership(second.worker, now());
    await pause(leadMs / 2);
    for (const w of [...leadingSince.keys()]) endLeadership(w, now());
  } finally {
    listeners.forEach((off) => off());
    stopObserving.abort();
    await observing;
  }

  const bad = overlaps(spans);
  printer.line();
  const facts = [
    bad.length === 0 ? 'one leader at a time' : `${bad.length} OVERLAPPING leaderships`,
    `failover ${seconds(crashFailoverMs)} after a crash (session timeout ${seconds(sessionTimeoutMs)})`,
    `${seconds(cleanFailoverMs)} after a clean stop`,
  ];
  printer.line(`  ${facts.join('; ')}.`);
  return { title: 'leader election', ok: bad.length === 0, summary: facts.join('; ') };
}
