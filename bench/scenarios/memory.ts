/**
 * `memory`: what a session costs on each transport. A fresh Node process per measurement opens N
 * sessions (1,000; 20 with --quick), one ZkClient each, on one transport, and reports its memory
 * after full garbage collections before and after; the growth divided by N is the cost of one
 * session: RSS (everything, the binding's C heap included), and the JS heap alone.
 */
import type { TransportName } from '../../src/client/chooseTransport';
import { builtTransports } from '../env';
import { fmtNum, fmtRatio, judge, mdTable, notMeasured } from '../report';
import { median, ratio, rotate } from '../stats';
import { runMemoryProcess, type MemoryReading } from './memoryProcess';
import type { BenchContext, Goal, RatioBar, Scenario, ScenarioResult } from './types';

interface SessionsReading extends MemoryReading {
  openMs: number;
  closeMs: number;
}

function measureIn(ctx: BenchContext, transport: TransportName, sessions: number): Promise<SessionsReading> {
  return runMemoryProcess<SessionsReading>('memoryChild.ts', [ctx.connectString, transport, String(sessions)], `${sessions} sessions, ${transport}`);
}

/** Issue 21's bound on an idle session's JS heap, kB. */
const IDLE_HEAP_KB = 5;

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const { quick } = ctx.options;
  const sessions = quick ? 20 : 1_000;
  const rounds = ctx.options.rounds ?? (quick ? 1 : 3);
  const failures: string[] = [];
  const transports = builtTransports();
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
  // Idle sessions by the thousand, in one process: they must open and close cleanly, and cost the same each.
  const idleSessions = quick ? 300 : 10_000;
  let idle: { rssKb: number; heapKb: number; openMs: number; closeMs: number } | undefined;
  ctx.log(`memory: ${idleSessions} idle sessions on the protocol transport in one process`);
  try {
    const r = await measureIn(ctx, 'protocol', idleSessions);
    idle = { rssKb: (r.after.rss - r.before.rss) / 1024 / idleSessions, heapKb: (r.after.heapUsed - r.before.heapUsed) / 1024 / idleSessions, openMs: r.openMs, closeMs: r.closeMs };
  } catch (err) {
    failures.push(`memory, ${idleSessions} idle sessions: ${String(err)}`);
  }
  const fig = (t: TransportName, pick: (x: { rssKb: number; heapKb: number; externalKb: number }) => number) => {
    const list = perSession.get(t) ?? [];
    return list.length > 0 ? median(list.map(pick)) : Number.NaN;
  };
  const rows = transports.map((t) => [`${t} transport`, fmtNum(fig(t, (x) => x.rssKb)), fmtNum(fig(t, (x) => x.heapKb)), fmtNum(fig(t, (x) => x.externalKb)), String(perSession.get(t)?.length ?? 0)]);
  const rss = ratio(fig('protocol', (x) => x.rssKb), fig('native', (x) => x.rssKb));
  const heap = ratio(fig('protocol', (x) => x.heapKb), fig('native', (x) => x.heapKb));
  const goals: Goal[] = [
    idle ? judge(`idle session ≤ ${IDLE_HEAP_KB} kB of JS heap (${idleSessions} in one process)`, idle.heapKb, IDLE_HEAP_KB, 'lower', `${fmtNum(idle.heapKb)} kB`) : notMeasured(`idle session ≤ ${IDLE_HEAP_KB} kB of JS heap`, 'the run failed'),
  ];
  const bars: RatioBar[] = [{ metric: 'RSS per session', versus: 'zk-recipes-native', ratio: rss, better: 'lower' }];
  const markdown = [
    '## 8. Memory per session',
    '',
    `A fresh Node process per measurement opens ${sessions} sessions, one \`ZkClient\` each, on one transport, after 200 sessions opened first (they load and warm up the code, and take up the slack loading leaves in the heap); memory is read as the least of 8 readings, one after each of 8 full garbage collections (\`--expose-gc\`), before and after the ${sessions}, and the growth is divided by ${sessions} (kB per session, median of ${rounds} round(s)). RSS counts everything, the native binding's C memory included; the JS heap and external memory are V8's share.`,
    '',
    mdTable(['transport', 'RSS kB / session', 'JS heap kB / session', 'external + ArrayBuffers kB / session', 'runs'], rows, [1, 2, 3, 4]),
    '',
    `**Transports (protocol ÷ native):** RSS ${fmtRatio(rss)}, JS heap ${fmtRatio(heap)}.`,
    '',
    idle
      ? `**${idleSessions.toLocaleString('en-US')} idle sessions in one process** (protocol transport, measured the same way, one run): ${fmtNum(idle.heapKb)} kB of JS heap and ${fmtNum(idle.rssKb)} kB of RSS per session; opened (in batches of 100, each answering an exists) in ${fmtNum(idle.openMs / 1000)} s, all closed, every closeSession answered, in ${fmtNum(idle.closeMs / 1000)} s.`
      : `**${idleSessions} idle sessions in one process:** the run failed (see Failures).`,
  ].join('\n');
  return { markdown, goals, bars, failures };
}

export const scenario: Scenario = { name: 'memory', order: 8, title: 'Memory per session', run };
