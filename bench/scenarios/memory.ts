/**
 * `memory`: what a session costs on each transport. A fresh Node process per measurement opens N
 * sessions (1,000; 20 with --quick), one ZkClient each, on one transport, and reports its memory
 * after full garbage collections before and after; the growth divided by N is the cost of one
 * session: RSS (everything, the binding's C heap included), and the JS heap alone.
 */
import { transportFactory, type TransportName } from '../../src/transport/chooseTransport';
import { fmtNum, fmtRatio, mdTable } from '../report';
import { median, ratio, rotate } from '../stats';
import { runMemoryProcess, type MemoryReading } from './memoryProcess';
import type { BenchContext, Goal, RatioBar, Scenario, ScenarioResult } from './types';

function measureIn(ctx: BenchContext, transport: TransportName, sessions: number): Promise<MemoryReading> {
  return runMemoryProcess('memoryChild.ts', [ctx.connectString, transport, String(sessions)], transport);
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const { quick } = ctx.options;
  const sessions = quick ? 20 : 1_000;
  const rounds = ctx.options.rounds ?? (quick ? 1 : 3);
  const failures: string[] = [];
  const transports: TransportName[] = ['protocol'];
  try {
    transportFactory('native');
    transports.push('native');
  } catch {
    // Measured on the protocol transport only.
  }
  const perSession = new Map<TransportName, Array<{ rssKb: number; heapKb: number; externalKb: number }>>();
  for (let round = 0; round < rounds; round++) {
    for (const transport of rotate(transports, round)) {
      ctx.log(`memory: ${sessions} sessions on the ${transport} transport, round ${round + 1}/${rounds}`);
      try {
        const { before, after } = await measureIn(ctx, transport, sessions);
        const kb = (a: number, b: number) => (a - b) / 1024 / sessions;
        perSession.set(transport, [
          ...(perSession.get(transport) ?? []),
          { rssKb: kb(after.rss, before.rss), heapKb: kb(after.heapUsed, before.heapUsed), externalKb: kb(after.external + after.arrayBuffers, before.external + before.arrayBuffers) },
        ]);
      } catch (err) {
        failures.push(`memory, ${transport}: ${String(err)}`);
      }
    }
  }
  const fig = (t: TransportName, pick: (x: { rssKb: number; heapKb: number; externalKb: number }) => number) => {
    const list = perSession.get(t) ?? [];
    return list.length > 0 ? median(list.map(pick)) : Number.NaN;
  };
  const rows = transports.map((t) => [`${t} transport`, fmtNum(fig(t, (x) => x.rssKb)), fmtNum(fig(t, (x) => x.heapKb)), fmtNum(fig(t, (x) => x.externalKb)), String(perSession.get(t)?.length ?? 0)]);
  const rss = ratio(fig('protocol', (x) => x.rssKb), fig('native', (x) => x.rssKb));
  const heap = ratio(fig('protocol', (x) => x.heapKb), fig('native', (x) => x.heapKb));
  // Reported, not a goal.
  const goals: Goal[] = [];
  const bars: RatioBar[] = [{ metric: 'RSS per session', versus: 'zk-recipes-native', ratio: rss, better: 'lower' }];
  const markdown = [
    '## 8. Memory per session',
    '',
    `A fresh Node process per measurement opens ${sessions} sessions, one \`ZkClient\` each, on one transport, after 200 sessions opened first (they load and warm up the code, and take up the slack loading leaves in the heap); memory is read after full garbage collections (\`--expose-gc\`) before and after the ${sessions}, and the growth is divided by ${sessions} (kB per session, median of ${rounds} round(s)). RSS counts everything, the native binding's C memory included; the JS heap and external memory are V8's share.`,
    '',
    mdTable(['transport', 'RSS kB / session', 'JS heap kB / session', 'external + ArrayBuffers kB / session', 'runs'], rows, [1, 2, 3, 4]),
    '',
    `**Transports (protocol ÷ native):** RSS ${fmtRatio(rss)}, JS heap ${fmtRatio(heap)}.`,
  ].join('\n');
  return { markdown, goals, bars, failures };
}

export const scenario: Scenario = { name: 'memory', order: 8, title: 'Memory per session', run };
