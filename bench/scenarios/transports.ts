/**
 * `transports`: the two transports side by side on plain operations, below the recipes. Four
 * ways to run getData and setData on one node: ZkClient on the protocol transport, ZkClient on the
 * native transport, the bare ProtocolTransport, and the bare binding's native callbacks. Two
 * workloads: sequential (one operation in flight: per-operation latency, p50 and p99) and
 * pipelined (64 in flight: throughput, where per-call CPU shows). Plus a failing read (NONODE),
 * sequential: what an error that keeps its caller's stack costs, on each transport.
 */
import ZooKeeperBinding from 'zookeeper';
import { ZkClient } from '../../src';
import { ProtocolTransport } from '../../src/protocol/ProtocolTransport';
import { builtTransports } from '../env';
import { clockUs } from '../peers/clock';
import { fmtNum, fmtRatio, judge, mdTable, notMeasured } from '../report';
import { inFlight, median, pct, ratio, rotate } from '../stats';
import type { BenchContext, Goal, RatioBar, Scenario, ScenarioResult } from './types';

/* eslint-disable @typescript-eslint/no-explicit-any -- the binding has no usable typings */
type Op = 'get' | 'set' | 'missing';
type Call = (op: Op, path: string, data: Buffer) => Promise<unknown>;

interface Way {
  key: 'client-protocol' | 'client-native' | 'bare-protocol' | 'bare-native';
  label: string;
  open(): Promise<Call>;
  close(): Promise<void>;
}

/** Per-operation latencies (sequential) or one throughput figure (pipelined), with this process's CPU per operation. */
interface Sample {
  latUs: number[];
  opsPerSec: number;
  cpuUs: number;
}

async function measure(n: number, body: (lat: number[]) => Promise<void>): Promise<Sample> {
  const lat: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = clockUs();
  await body(lat);
  const elapsedUs = clockUs() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { latUs: lat, opsPerSec: (n / elapsedUs) * 1e6, cpuUs: (cpu.user + cpu.system) / n };
}

function sequential(call: Call, op: Op, path: string, n: number): Promise<Sample> {
  const data = Buffer.alloc(64, 'x');
  return measure(n, async (lat) => {
    for (let i = 0; i < n; i++) {
      const t0 = clockUs();
      await call(op, path, data).catch((err: unknown) => {
        if (op !== 'missing') throw err;
      });
      lat.push(clockUs() - t0);
    }
  });
}

function pipelined(call: Call, op: Op, path: string, n: number, width: number): Promise<Sample> {
  const data = Buffer.alloc(64, 'x');
  return measure(n, () => inFlight(n, width, () => call(op, path, data)));
}

function clientWay(ctx: BenchContext, transport: 'protocol' | 'native'): Way {
  let client: ZkClient | undefined;
  return {
    key: transport === 'protocol' ? 'client-protocol' : 'client-native',
    label: `ZkClient, ${transport} transport`,
    async open() {
      const c = new ZkClient({ connectString: ctx.connectString, sessionTimeoutMs: ctx.sessionTimeoutMs, transport });
      client = c;
      c.start();
      await c.blockUntilConnected({ timeoutMs: 30_000 });
      return (op, path, data) => (op === 'set' ? c.setData(path, data) : c.getData(op === 'get' ? path : `${path}-missing`));
    },
    close: async () => client?.close(),
  };
}

function bareProtocolWay(ctx: BenchContext): Way {
  let t: ProtocolTransport | undefined;
  return {
    key: 'bare-protocol',
    label: 'bare ProtocolTransport',
    async open() {
      const transport = new ProtocolTransport({ connectString: ctx.connectString, sessionTimeoutMs: ctx.sessionTimeoutMs });
      t = transport;
      await new Promise<void>((resolve) => transport.on('connected', () => resolve()));
      return (op, path, data) => (op === 'set' ? transport.setData(path, data, -1) : transport.getData(op === 'get' ? path : `${path}-missing`));
    },
    close: async () => t?.close(),
  };
}

function bareNativeWay(ctx: BenchContext): Way {
  let zk: any;
  return {
    key: 'bare-native',
    label: 'bare binding, native callbacks',
    async open() {
      zk = new (ZooKeeperBinding as any)({ connect: ctx.connectString, timeout: ctx.sessionTimeoutMs, debug_level: 0, host_order_deterministic: false });
      await new Promise<void>((resolve) => {
        zk.once('connect', () => resolve());
        zk.init({});
      });
      const native = zk.native;
      return (op, path, data) =>
        new Promise((resolve, reject) => {
          const done = (rc: number, message: string, x: unknown) => (rc === 0 ? resolve(x) : reject(new Error(message)));
          if (op === 'set') native.a_set(path, data, -1, done);
          else native.a_get(op === 'get' ? path : `${path}-missing`, false, done);
        });
    },
    close: async () => zk?.close(),
  };
}

async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const { quick } = ctx.options;
  const rounds = ctx.options.rounds ?? (quick ? 1 : 5);
  const n = ctx.options.iterations ?? (quick ? 200 : 3_000);
  const failures: string[] = [];
  const nativeBuilt = builtTransports().includes('native');
  const ways: Way[] = [clientWay(ctx, 'protocol'), bareProtocolWay(ctx), ...(nativeBuilt ? [clientWay(ctx, 'native'), bareNativeWay(ctx)] : [])];
  const workloads: Array<{ name: string; kind: 'sequential' | 'pipelined'; op: Op; run: (call: Call, path: string) => Promise<Sample> }> = [
    { name: 'getData, sequential', kind: 'sequential', op: 'get', run: (c, p) => sequential(c, 'get', p, n) },
    { name: 'setData, sequential', kind: 'sequential', op: 'set', run: (c, p) => sequential(c, 'set', p, n) },
    { name: 'getData of a missing node (NONODE), sequential', kind: 'sequential', op: 'missing', run: (c, p) => sequential(c, 'missing', p, n) },
    { name: 'getData, 64 in flight', kind: 'pipelined', op: 'get', run: (c, p) => pipelined(c, 'get', p, n * 4, 64) },
    { name: 'setData, 64 in flight', kind: 'pipelined', op: 'set', run: (c, p) => pipelined(c, 'set', p, n * 4, 64) },
  ];
  const samples = new Map<string, Sample[]>();
  const path = `${ctx.root}/transports`;
  const admin = new ZkClient({ connectString: ctx.connectString, sessionTimeoutMs: ctx.sessionTimeoutMs });
  admin.start();
  await admin.blockUntilConnected({ timeoutMs: 30_000 });
  await admin.ensurePath(path);
  await admin.close();

  for (let round = 0; round < rounds; round++) {
    for (const way of rotate(ways, round)) {
      ctx.log(`transports: ${way.label}, round ${round + 1}/${rounds}`);
      try {
        const call = await way.open();
        for (const w of workloads) {
          // The first round warms each way up, unmeasured.
          if (round === 0) await w.run(call, path);
          const key = `${w.name}/${way.key}`;
          samples.set(key, [...(samples.get(key) ?? []), await w.run(call, path)]);
        }
      } catch (err) {
        failures.push(`transports, ${way.label}: ${String(err)}`);
      } finally {
        await way.close().catch(() => undefined);
      }
    }
  }

  const all = (w: string, k: Way['key']) => samples.get(`${w}/${k}`) ?? [];
  const p = (w: string, k: Way['key'], q: number) => {
    const lat = all(w, k).flatMap((s) => s.latUs);
    return lat.length > 0 ? pct(lat, q) : Number.NaN;
  };
  const ops = (w: string, k: Way['key']) => (all(w, k).length > 0 ? median(all(w, k).map((s) => s.opsPerSec)) : Number.NaN);
  const cpu = (w: string, k: Way['key']) => (all(w, k).length > 0 ? median(all(w, k).map((s) => s.cpuUs)) : Number.NaN);

  const rows: string[][] = [];
  for (const w of workloads) {
    for (const way of ways) {
      rows.push([
        w.name,
        way.label,
        w.kind === 'sequential' ? fmtNum(p(w.name, way.key, 50)) : '',
        w.kind === 'sequential' ? fmtNum(p(w.name, way.key, 99)) : '',
        fmtNum(ops(w.name, way.key)),
        fmtNum(cpu(w.name, way.key)),
      ]);
    }
  }
  const seqRatio = (w: string, q: number) => ratio(p(w, 'client-protocol', q), p(w, 'client-native', q));
  const pipeRatio = (w: string) => ratio(ops(w, 'client-protocol'), ops(w, 'client-native'));
  const goals: Goal[] = [];
  const bars: RatioBar[] = [];
  for (const w of workloads) {
    if (w.op === 'missing') continue;
    const text = w.kind === 'sequential' ? `${w.name}: ZkClient p50, protocol ≤ 1 × native` : `${w.name}: ZkClient throughput, protocol > 1 × native`;
    const value = w.kind === 'sequential' ? seqRatio(w.name, 50) : pipeRatio(w.name);
    goals.push(!nativeBuilt ? notMeasured(text, 'the native binding is not built') : w.kind === 'sequential' ? judge(text, value, 1, 'lower') : judge(text, value, 1, 'higher'));
    bars.push({ metric: w.name, versus: 'zk-recipes-native', ratio: value, better: w.kind === 'sequential' ? 'lower' : 'higher', goal: 1 });
  }
  const lines = workloads.map((w) =>
    w.kind === 'sequential'
      ? `${w.name}: p50 ${fmtRatio(seqRatio(w.name, 50))}, p99 ${fmtRatio(seqRatio(w.name, 99))}, CPU ${fmtRatio(ratio(cpu(w.name, 'client-protocol'), cpu(w.name, 'client-native')))}`
      : `${w.name}: throughput ${fmtRatio(pipeRatio(w.name))}, CPU ${fmtRatio(ratio(cpu(w.name, 'client-protocol'), cpu(w.name, 'client-native')))}`,
  );
  const markdown = [
    '## 7. Transports: plain operations',
    '',
    `One node, one session per way, ${rounds} round(s) (the first preceded by an unmeasured warm-up), ways interleaved. Sequential: ${n} operations one after another, per-operation latency on this process's clock (µs, machine-dependent; p50 and p99 over every round's operations). Pipelined: ${n * 4} operations with 64 in flight (operations per second, median of rounds). CPU: this process's user + system time per operation (the native binding's I/O runs on its own thread, counted too). The NONODE row is what a failed call costs, its error created in the caller's async frame (the protocol transport) or in the binding's callback (the native one).`,
    '',
    mdTable(['workload', 'way', 'p50 µs', 'p99 µs', 'operations / s', 'CPU µs / op'], rows, [2, 3, 4, 5]),
    '',
    `**Transports (ZkClient on the protocol transport ÷ on the native one):** ${lines.join('; ')}.`,
  ].join('\n');
  return { markdown, goals, bars, failures };
}

export const scenario: Scenario = { name: 'transports', order: 7, title: 'Transports: plain operations', run };
