/**
 * Scene 4: a DistributedQueue with two producers and two consumers in lock-safe mode (at least
 * once). Every item put must be handled; none may be lost.
 */
import { queueCommand, type QueueReport } from '../../cli/queue';
import { seconds } from '../checks';
import { follow } from '../follow';
import { now, type WorkerEvent } from '../protocol';
import { pick, type SceneContext, type SceneResult } from './scene';

export async function queueScene(ctx: SceneContext): Promise<SceneResult> {
  const { printer, quick } = ctx;
  const producers = pick(ctx, ['w1', 'w2']);
  const consumers = pick(ctx, ['w3', 'w4']);
  const perProducer = quick ? 15 : 40;
  const intervalMs = quick ? 10 : 40;
  const workMs = quick ? 15 : 60;
  const total = perProducer * producers.length;
  const path = `${ctx.root}/queue/items`;
  const lockPath = `${ctx.root}/queue/locks`;
  printer.heading(`4. A queue: DistributedQueue at ${path}`, [
    `${producers.map((w) => w.name).join(' and ')} each put ${perProducer} items; ${consumers.map((w) => w.name).join(' and ')} consume them in lock-safe mode`,
    `(at least once: an item is deleted only after it was handled), ${workMs} ms of work each.`,
  ]);

  const put = new Set<string>();
  const handled = new Map<string, number>();
  const byConsumer = new Map<string, number>(consumers.map((w) => [w.name, 0]));
  let depth = 0;
  let maxDepth = 0;
  let lastMilestone = -1;
  const startedAt = now();
  const show = () => {
    const done = [...handled.keys()].length;
    const milestone = Math.floor((4 * done) / total);
    printer.progress(`put ${String(put.size).padStart(3)}/${total}   handled ${String(done).padStart(3)}/${total}   depth ${String(depth).padStart(3)}`, milestone !== lastMilestone);
    lastMilestone = milestone;
  };

  const stopFollowing = new AbortController();
  await follow(ctx.client, queueCommand, path, AbortSignal.any([stopFollowing.signal, ctx.signal]), (report: QueueReport | undefined) => {
    depth = report?.depth ?? 0;
    maxDepth = Math.max(maxDepth, depth);
    show();
  });
  let allHandled: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allHandled = resolve));
  const listeners = [...producers, ...consumers].map((w) => {
    const onEvent = (e: WorkerEvent) => {
      if (e.event === 'put') put.add(e.item);
      if (e.event === 'delivered') {
        handled.set(e.item, (handled.get(e.item) ?? 0) + 1);
        byConsumer.set(w.name, (byConsumer.get(w.name) ?? 0) + 1);
        if (handled.size === total) allHandled();
      }
      if (e.event === 'put' || e.event === 'delivered') show();
    };
    w.emitter.on('event', onEvent);
    return () => w.emitter.off('event', onEvent);
  });

  try {
    for (const w of consumers) w.send({ op: 'consume', path, lockPath, workMs });
    const marks = producers.map((w) => w.events.length);
    for (const w of producers) w.send({ op: 'produce', path, count: perProducer, intervalMs });
    await Promise.all(producers.map((w, i) => w.waitFor('produced', ctx.waitMs, marks[i])));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      finished,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`only ${handled.size} of ${total} items handled within ${seconds(ctx.waitMs)}`)), ctx.waitMs))),
    ]).finally(() => clearTimeout(timer));
    const stopMarks = consumers.map((w) => w.events.length);
    for (const w of consumers) w.send({ op: 'stopConsuming' });
    await Promise.all(consumers.map((w, i) => w.waitFor('consumerStopped', ctx.waitMs, stopMarks[i])));
  } finally {
    listeners.forEach((off) => off());
    stopFollowing.abort();
    printer.endProgress();
  }

  const lost = [...put].filter((item) => !handled.has(item));
  const twice = [...handled.values()].filter((n) => n > 1).length;
  const tookMs = now() - startedAt;
  const split = [...byConsumer].map(([name, n]) => `${name} ${n}`).join(', ');
  const facts = [
    `${handled.size} of ${total} items delivered in ${seconds(tookMs)} (${split})`,
    lost.length === 0 ? 'none lost' : `${lost.length} LOST`,
    twice === 0 ? 'none twice' : `${twice} delivered twice (allowed: at least once)`,
    `deepest ${maxDepth}`,
  ];
  printer.line(`  ${facts.join('; ')}.`);
  return { title: 'queue', ok: lost.length === 0 && handled.size === total, summary: facts.join('; ') };
}
