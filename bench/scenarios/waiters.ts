/**
 * `waiters`: the heap a waiting waiter costs, at two queue lengths (--waiters, default 100 and
 * 1,000; 5 and 10 with --quick). A fresh Node process per measurement (peers/waiterMemoryChild.ts)
 * queues W waiters on one mutex behind a holder, spread over --handoff-sessions sessions, and reads
 * its memory after full garbage collections before the queue forms and once every waiter waits
 * with its watch on the server; the growth divided by W is the cost of one waiter. A waiter needs
 * its own node and the one it watches, whatever the queue's length: the figure must not grow
 * with W. The queue then drains, each waiter holding alone (checked).
 */
import type { TransportName } from '../../src/client/chooseTransport';
import { builtTransports } from '../env';
import { fmtNum, fmtRatio, judge, mdTable, notMeasured } from '../report';
import { median, ratio, rotate } from '../stats';
import { runMemoryProcess } from './memoryProcess';
import type { BenchContext, Goal, RatioBar, Scenario, ScenarioResult } from './types';

/** Issue 21's bounds: at the largest queue, at most this factor of the smallest's heap per waiter, and at most this many kB. */
const FLAT_FACTOR = 1.25;
const MAX_KB = 12;

interface PerWaiter {
  heapKb: number;
  rssKb: number;
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const { quick } = ctx.options;
  const sizes = ctx.options.waiters;
  const sessions = ctx.options.handoffSessions;
  const rounds = ctx.options.rounds ?? (quick ? 1 : 2);
  const failures: string[] = [];
  const transports = builtTransports();
  const figures = new Map<string, PerWaiter[]>();
  for (const size of sizes) {
    for (let round = 0; round < rounds; round++) {
      for (const transport of rotate(transports, round)) {
        ctx.log(`waiters: ${size} waiters over ${sessions} sessions on the ${transport} transport, round ${round + 1}/${rounds}`);
        const path = `${ctx.root}/waiters/${size}/${transport}-${round}`;
        try {
          const { before, after } = await runMemoryProcess('waiterMemoryChild.ts', [ctx.connectString, transport, String(size), String(sessions), path], `${size} waiters, ${transport}`);
          const key = `${size}/${transport}`;
          figures.set(key, [...(figures.get(key) ?? []), { heapKb: (after.heapUsed - before.heapUsed) / 1024 / size, rssKb: (after.rss - before.rss) / 1024 / size }]);
        } catch (err) {
          failures.push(`waiters, ${size} on ${transport}: ${String(err)}`);
        }
      }
    }
  }
  const fig = (size: number, t: TransportName, pick: (x: PerWaiter) => number) => {
    const list = figures.get(`${size}/${t}`) ?? [];
    return list.length > 0 ? median(list.map(pick)) : Number.NaN;
  };
  const rows = sizes.flatMap((size) => transports.map((t) => [String(size), `${t} transport`, fmtNum(fig(size, t, (x) => x.heapKb)), fmtNum(fig(size, t, (x) => x.rssKb)), String(figures.get(`${size}/${t}`)?.length ?? 0)]));
  const small = Math.min(...sizes);
  const large = Math.max(...sizes);
  const growth = ratio(fig(large, 'protocol', (x) => x.heapKb), fig(small, 'protocol', (x) => x.heapKb));
  const largeKb = fig(large, 'protocol', (x) => x.heapKb);
  const flatGoal = `heap per waiter at ${large} waiters ≤ ${FLAT_FACTOR} × at ${small}`;
  const goals: Goal[] = [
    sizes.length < 2 ? notMeasured(flatGoal, 'one queue length run') : judge(flatGoal, growth, FLAT_FACTOR, 'lower'),
    judge(`heap per waiter at ${large} waiters ≤ ${MAX_KB} kB`, largeKb, MAX_KB, 'lower', `${fmtNum(largeKb)} kB`),
  ];
  const bars: RatioBar[] = [];
  const markdown = [
    '## 10. Heap per waiting waiter',
    '',
    `A fresh Node process per measurement queues W waiters on one mutex (each its own \`InterProcessMutex\`) behind a holder, spread over ${sessions} sessions, after a queue of 50 formed and drained once (it loads and warms up the code); memory is read as the least of 8 readings, one after each of 8 full garbage collections (\`--expose-gc\`), before the queue forms and once every waiter waits (its node stands, the server holds its watches, and two round trips in every session have taken every reply), and the growth is divided by W (kB per waiter, median of ${rounds} round(s)). The queue then drains, every waiter holding alone. A waiter needs its own node and the one it watches: the figure should not grow with the queue.`,
    '',
    mdTable(['waiters', 'transport', 'JS heap kB / waiter', 'RSS kB / waiter', 'runs'], rows, [0, 2, 3, 4]),
    '',
    `**Flatness (protocol transport):** heap per waiter at ${large} ÷ at ${small}: ${fmtRatio(growth)}.`,
  ].join('\n');
  return { markdown, goals, bars, failures };
}

export const scenario: Scenario = { name: 'waiters', order: 10, title: 'Heap per waiting waiter', run };
