/**
 * `npm run bench -- client`: the framework's overhead per operation against calling the native
 * binding directly, on the same server in interleaved rounds.
 *
 * Each round runs the same operations three ways: the binding's native callbacks (the floor), the
 * binding's own promise API, and ZkClient. Two workloads: sequential (one operation in flight:
 * latency) and pipelined (many in flight: throughput, where per-call CPU cost shows).
 */
import ZooKeeperBinding from 'zookeeper';
import { ZkClient } from '../src';
import { fmt, inFlight, median, nowMs } from './stats';

/* eslint-disable @typescript-eslint/no-explicit-any -- the binding has no usable typings */
type Runner = (op: 'get' | 'set', path: string, data: Buffer) => Promise<unknown>;

function nativeRunner(native: any): Runner {
  return (op, path, data) =>
    new Promise((resolve, reject) => {
      const done = (rc: number, message: string, x: unknown) => (rc === 0 ? resolve(x) : reject(new Error(message)));
      if (op === 'get') native.a_get(path, false, done);
      else native.a_set(path, data, -1, done);
    });
}

function promiseRunner(zk: any): Runner {
  return (op, path, data) => (op === 'get' ? zk.get(path, false) : zk.set(path, data, -1));
}

function clientRunner(client: ZkClient): Runner {
  return (op, path, data) => (op === 'get' ? client.getData(path) : client.setData(path, data));
}

async function connectBinding(connectString: string): Promise<any> {
  const zk = new (ZooKeeperBinding as any)({ connect: connectString, timeout: 30_000, debug_level: 0, host_order_deterministic: false });
  await new Promise<void>((resolve) => {
    zk.once('connect', () => resolve());
    zk.init({});
  });
  return zk;
}

/** Wall time and this process's CPU time per operation, in µs. */
interface Sample {
  wallUs: number;
  cpuUs: number;
}

async function measure(n: number, body: () => Promise<void>): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const t0 = nowMs();
  await body();
  const wallUs = ((nowMs() - t0) * 1000) / n;
  const cpu = process.cpuUsage(cpu0);
  return { wallUs, cpuUs: (cpu.user + cpu.system) / n };
}

function sequential(run: Runner, op: 'get' | 'set', path: string, n: number): Promise<Sample> {
  const data = Buffer.from('x'.repeat(64));
  return measure(n, async () => {
    for (let i = 0; i < n; i++) await run(op, path, data);
  });
}

function pipelined(run: Runner, op: 'get' | 'set', path: string, n: number, width: number): Promise<Sample> {
  const data = Buffer.from('x'.repeat(64));
  return measure(n, () => inFlight(n, width, () => run(op, path, data)));
}

export interface ClientBenchOptions {
  connectString: string;
  quick: boolean;
}

export interface ClientBenchRow {
  workload: string;
  /** Median wall µs per operation. */
  nativeUs: number;
  promiseUs: number;
  clientUs: number;
  /** Median over rounds of ZkClient's wall time / native wall time in the same round, as a percentage over 1. */
  overheadPct: number;
  /** This process's CPU µs per operation (median), native and ZkClient. */
  nativeCpuUs: number;
  clientCpuUs: number;
}

export async function runClientBench({ connectString, quick }: ClientBenchOptions): Promise<ClientBenchRow[]> {
  const rounds = quick ? 2 : 11;
  const n = quick ? 200 : 2_000;
  const raw = await connectBinding(connectString);
  const promiseZk = await connectBinding(connectString);
  // On the binding too, so the difference is the framework's own (the transports are compared in
  // the transports scenario).
  const client = new ZkClient({ connectString, sessionTimeoutMs: 30_000, transport: 'native' });
  client.start();
  await client.blockUntilConnected({ timeoutMs: 30_000 });
  const path = `/bench-client-${process.pid}`;
  await client.create(path, { data: 'x' });
  const runners: Array<['nativeUs' | 'promiseUs' | 'clientUs', Runner]> = [
    ['nativeUs', nativeRunner(raw.native)],
    ['promiseUs', promiseRunner(promiseZk)],
    ['clientUs', clientRunner(client)],
  ];
  const workloads: Array<[string, (r: Runner) => Promise<Sample>]> = [
    ['getData, sequential', (r) => sequential(r, 'get', path, n)],
    ['setData, sequential', (r) => sequential(r, 'set', path, n)],
    ['getData, 64 in flight', (r) => pipelined(r, 'get', path, n * 4, 64)],
    ['setData, 64 in flight', (r) => pipelined(r, 'set', path, n * 4, 64)],
  ];
  const rows: ClientBenchRow[] = [];
  try {
    for (const [workload, run] of workloads) {
      await run(runners[0][1]); // warm-up
      const samples: Record<string, Sample[]> = { nativeUs: [], promiseUs: [], clientUs: [] };
      for (let round = 0; round < rounds; round++) {
        // Rotate the order each round so no runner always goes first.
        for (let k = 0; k < runners.length; k++) {
          const [name, runner] = runners[(round + k) % runners.length];
          samples[name].push(await run(runner));
        }
      }
      const wall = (name: string) => median(samples[name].map((s) => s.wallUs));
      const ratios = samples.clientUs.map((s, i) => s.wallUs / samples.nativeUs[i].wallUs);
      const row: ClientBenchRow = {
        workload,
        nativeUs: wall('nativeUs'),
        promiseUs: wall('promiseUs'),
        clientUs: wall('clientUs'),
        overheadPct: (median(ratios) - 1) * 100,
        nativeCpuUs: median(samples.nativeUs.map((s) => s.cpuUs)),
        clientCpuUs: median(samples.clientUs.map((s) => s.cpuUs)),
      };
      rows.push(row);
    }
  } finally {
    await client.delete(path, { quietly: true });
    await client.close();
    raw.close();
    promiseZk.close();
  }
  return rows;
}

export function clientTable(rows: readonly ClientBenchRow[]): string {
  const lines = [
    '| workload | native callbacks (µs/op) | binding promise API (µs/op) | ZkClient (µs/op) | ZkClient / native, paired by round | client CPU µs/op: native → ZkClient |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.workload} | ${fmt(r.nativeUs)} | ${fmt(r.promiseUs)} | ${fmt(r.clientUs)} | ${r.overheadPct >= 0 ? '+' : ''}${fmt(r.overheadPct)}% | ${fmt(r.nativeCpuUs)} → ${fmt(r.clientCpuUs)} (+${fmt(r.clientCpuUs - r.nativeCpuUs)}) |`,
    ),
  ];
  return lines.join('\n');
}
