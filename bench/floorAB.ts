/**
 * zk-recipes against the raw-socket floor, A/B in one process: the uncontended pair and the
 * contended loop of the bench's scenarios, the two clients interleaved round by round on one
 * server, each round's ratio taken then, and the median of those ratios reported. Made for
 * comparing commits (run it in each checkout, one after another, twice): the full bench runs more
 * libraries and scenarios between the two clients, and its ratios move with what runs beside them.
 *
 *   node -r ts-node/register/transpile-only bench/floorAB.ts [--rounds 12] [--pairs 3000] [--contended-rounds 4] [--contended-ms 3000] [--connect host:port]
 *
 * Prints one line per scenario: client CPU per pair (or acquisition) of each, and the median
 * ratios of CPU, p50 (uncontended) and throughput (contended, 8 sessions).
 */
import { parseArgs } from 'node:util';
import { external, startStandalone } from './deployment';
import { RawFloorClient } from './peers/rawFloor';
import { ZkRecipesPeer } from './peers/zkRecipes';
import { fmt, median, pct } from './stats';
import { runToExit } from './script';

const SESSION_TIMEOUT_MS = 30_000;
const CONTENDED_SESSIONS = 8;

interface Client {
  uncontended(path: string, iterations: number): Promise<number[]>;
  contended(path: string, durationMs: number): Promise<{ counts: number[]; elapsedMs: number }>;
}

function cpuUs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return used.user + used.system;
}

/** Runs `measure` for each client in turn, `rounds` times. */
async function inTurns(rounds: number, clients: ReadonlyArray<[name: 'zk' | 'raw', client: Client]>, measure: (name: 'zk' | 'raw', client: Client, round: number) => Promise<void>): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    for (const [name, client] of clients) await measure(name, client, round);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '12' },
      pairs: { type: 'string', default: '3000' },
      'contended-rounds': { type: 'string', default: '4' },
      'contended-ms': { type: 'string', default: '3000' },
      connect: { type: 'string' },
    },
  });
  const rounds = Number(values.rounds);
  const pairs = Number(values.pairs);
  const contendedRounds = Number(values['contended-rounds']);
  const contendedMs = Number(values['contended-ms']);
  const deployment = values.connect ? external(values.connect) : await startStandalone();
  const zk = new ZkRecipesPeer(deployment.spread, SESSION_TIMEOUT_MS, {});
  const raw = new RawFloorClient(deployment.spread, SESSION_TIMEOUT_MS);
  const clients: Array<[name: 'zk' | 'raw', client: Client]> = [
    ['zk', zk],
    ['raw', raw],
  ];
  const root = `/floorAB-${Date.now()}`;
  try {
    await zk.open(1);
    await raw.open(1);
    const cpu = { zk: [] as number[], raw: [] as number[] };
    const p50 = { zk: [] as number[], raw: [] as number[] };
    for (const [name, client] of clients) await client.uncontended(`${root}/u-${name}`, 2_000);
    await inTurns(rounds, clients, async (name, client) => {
      const since = process.cpuUsage();
      const lat = await client.uncontended(`${root}/u-${name}`, pairs);
      cpu[name].push(cpuUs(since) / pairs);
      p50[name].push(pct(lat, 50));
    });
    const ratios = (a: number[], b: number[]) => median(a.map((x, i) => x / b[i]));
    console.log(
      `uncontended: client CPU / pair zk-recipes ${fmt(median(cpu.zk), 1)} µs, raw ${fmt(median(cpu.raw), 1)} µs; ` +
        `zk-recipes ÷ raw: CPU ${fmt(ratios(cpu.zk, cpu.raw), 2)}×, p50 ${fmt(ratios(p50.zk, p50.raw), 2)}× (median of ${rounds} rounds of ${pairs} pairs)`,
    );

    await zk.open(CONTENDED_SESSIONS);
    await raw.open(CONTENDED_SESSIONS);
    const ccpu = { zk: [] as number[], raw: [] as number[] };
    const rate = { zk: [] as number[], raw: [] as number[] };
    for (const [name, client] of clients) await client.contended(`${root}/w-${name}`, 1_000);
    await inTurns(contendedRounds, clients, async (name, client, round) => {
      const since = process.cpuUsage();
      const run = await client.contended(`${root}/c-${name}-${round}`, contendedMs);
      const used = cpuUs(since);
      const acquisitions = run.counts.reduce((a, b) => a + b, 0);
      ccpu[name].push(used / acquisitions);
      rate[name].push(acquisitions / (run.elapsedMs / 1000));
    });
    console.log(
      `contended, ${CONTENDED_SESSIONS} sessions: client CPU / acquisition zk-recipes ${fmt(median(ccpu.zk), 0)} µs, raw ${fmt(median(ccpu.raw), 0)} µs; ` +
        `zk-recipes ÷ raw: CPU ${fmt(ratios(ccpu.zk, ccpu.raw), 2)}×, throughput ${fmt(ratios(rate.zk, rate.raw), 2)}× (median of ${contendedRounds} rounds of ${contendedMs} ms)`,
    );
  } finally {
    await zk.closeSessions().catch(() => undefined);
    await raw.close().catch(() => undefined);
    await deployment.close();
  }
}

runToExit(main);
