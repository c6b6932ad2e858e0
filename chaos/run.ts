/**
 * `npm run chaos -- [--duration S] [--seed N] [--transport native|protocol] [--workers K] [--quick] [--runs N] [--overlap]`
 *
 * The runner of the fault-injection suite: it starts a 3-node TestingCluster, the register, one
 * FaultProxy and one worker process per worker, runs the nemesis's seeded schedule, lets the system
 * quiet down, drains the queue, stops the workers and looks for nodes left behind; then the checker
 * reads the whole history and the report says what happened. Exits 1 when a violation was found;
 * the history is then saved as JSON with its seed.
 *
 * Other options: --session-timeout ms (default 4000), --policy standard|session (default standard),
 * --faults kind,kind (only these kinds), --out dir (default chaos/out), --save-history (also when
 * nothing failed), --check history.json (check a saved history again and report on it; no run). `--quick` is about a minute: 3 workers, 30 s of nemesis, a worker paused past its
 * session first. `--runs N` runs N quick runs back to back, seeds `--seed`, `--seed`+1, ... (see
 * `runs.ts`). `--overlap` draws groups of 2-3 faults that overlap (see `nemesis.ts`). `--partitions`
 * and `--mutate` add partitions inside the ensemble and mutated replies to the kinds drawn.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ExponentialBackoffRetry, ZkClient, isZkError, type ConnectionStateErrorPolicy } from '../src';
import { FaultProxy, TestingCluster } from '../src/testing';
import { check } from './checker';
import { HistoryRecorder, now, type HistoryEvent, type SavedHistory } from './history';
import { MUTATION_KINDS, type MutationKind } from './frames';
import { ALL_FAULT_KINDS, ENSEMBLE_KINDS, FAULT_KINDS, MUTATE_KINDS, makeSchedule, runNemesis, type FaultKind, type ScheduledFault } from './nemesis';
import { ChildLines } from './processes';
import { deriveSeed } from './random';
import { buildReport } from './report';
import { batchExitCode, batchSeeds, finalLine, operationsOf, summaryLine, summaryMarkdown, type RunSummary } from './runs';
import { chaosPaths, SEMAPHORE_LEASES } from './workload';
import type { WorkerConfig } from './worker';

export interface Args {
  durationS: number;
  quick: boolean;
  seed: number;
  transport: string | undefined;
  workers: number;
  sessionTimeoutMs: number;
  policy: ConnectionStateErrorPolicy;
  faults: FaultKind[];
  out: string;
  saveHistory: boolean;
  /** A saved history to check again (and report on), instead of a run. */
  check: string | undefined;
  /** How many runs, back to back, each with its own seed; 1 unless `--runs` (which implies `--quick`). */
  runs: number;
  /** Faults come in groups of 2-3 that overlap. */
  overlap: boolean;
}

export function parseArgs(argv: readonly string[]): Args {
  const value = (i: number, flag: string) => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value`);
    return v;
  };
  const int = (i: number, flag: string, min: number) => {
    const n = Number(value(i, flag));
    if (!Number.isInteger(n) || n < min) throw new Error(`${flag} takes an integer of at least ${min}, got ${argv[i + 1]}`);
    return n;
  };
  // Many runs are quick ones unless told otherwise: that is what they are for.
  const quick = argv.includes('--quick') || argv.includes('--runs');
  const args: Args = {
    durationS: quick ? 30 : 600,
    quick,
    seed: Math.floor(Math.random() * 2 ** 31),
    transport: undefined,
    workers: quick ? 3 : 5,
    sessionTimeoutMs: 4_000,
    policy: 'standard',
    faults: [...FAULT_KINDS],
    out: join(__dirname, 'out'),
    saveHistory: false,
    check: undefined,
    runs: 1,
    overlap: false,
  };
  let partitions = false;
  let mutate = false;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    switch (flag) {
      case '--quick':
        break;
      case '--duration':
        args.durationS = int(i++, flag, 5);
        break;
      case '--seed':
        args.seed = int(i++, flag, 0);
        break;
      case '--transport': {
        const t = value(i++, flag);
        if (t !== 'native' && t !== 'protocol') throw new Error(`--transport is native or protocol, got ${t}`);
        args.transport = t;
        break;
      }
      case '--workers':
        args.workers = int(i++, flag, 2);
        break;
      case '--session-timeout':
        args.sessionTimeoutMs = int(i++, flag, 1_000);
        break;
      case '--policy': {
        const p = value(i++, flag);
        if (p !== 'standard' && p !== 'session') throw new Error(`--policy is standard or session, got ${p}`);
        args.policy = p;
        break;
      }
      case '--faults': {
        const kinds = value(i++, flag).split(',');
        const unknown = kinds.filter((k) => !(ALL_FAULT_KINDS as readonly string[]).includes(k));
        if (unknown.length > 0) throw new Error(`unknown fault kinds ${unknown.join(', ')}; known: ${ALL_FAULT_KINDS.join(', ')}`);
        args.faults = kinds as FaultKind[];
        break;
      }
      case '--out':
        args.out = value(i++, flag);
        break;
      case '--save-history':
        args.saveHistory = true;
        break;
      case '--check':
        args.check = value(i++, flag);
        break;
      case '--runs':
        args.runs = int(i++, flag, 1);
        break;
      case '--overlap':
        args.overlap = true;
        break;
      case '--partitions':
        partitions = true;
        break;
      case '--mutate':
        mutate = true;
        break;
      default:
        throw new Error(`unknown option ${flag}`);
    }
  }
  if (partitions) args.faults = [...args.faults, ...ENSEMBLE_KINDS.filter((k) => !args.faults.includes(k))];
  if (mutate) args.faults = [...args.faults, ...MUTATE_KINDS.filter((k) => !args.faults.includes(k))];
  if (args.check !== undefined && args.runs > 1) throw new Error('--check checks one saved history; it takes no --runs');
  return args;
}

function isDefault(kinds: readonly FaultKind[]): boolean {
  return kinds.length === FAULT_KINDS.length && FAULT_KINDS.every((k) => kinds.includes(k));
}

/** The command that replays one run's schedule. */
export function replayCommand(args: Args): string {
  return `npm run chaos -- --seed ${args.seed} --duration ${args.durationS} --workers ${args.workers}${args.transport ? ` --transport ${args.transport}` : ''}${args.policy !== 'standard' ? ` --policy session` : ''}${isDefault(args.faults) ? '' : ` --faults ${args.faults.join(',')}`}${args.sessionTimeoutMs !== 4_000 ? ` --session-timeout ${args.sessionTimeoutMs}` : ''}${args.quick ? ' --quick' : ''}${args.overlap ? ' --overlap' : ''}`;
}

/** How long the register and the workers may take to start. */
const STARTUP_MS = 300_000;
/** The longest the queue may take to drain while it still shrinks, in session timeouts. */
const DRAIN_CAP_TIMEOUTS = 20;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function say(text: string): void {
  process.stderr.write(`[chaos] ${text}\n`);
}

/** Children of `path`, with their owners; none when it is gone. */
async function nodesUnder(client: ZkClient, path: string): Promise<Array<{ node: string; owner: bigint }>> {
  let children: string[];
  try {
    children = await client.getChildren(path);
  } catch (err) {
    if (isZkError(err, 'NONODE')) return [];
    throw err;
  }
  const out: Array<{ node: string; owner: bigint }> = [];
  for (const child of children) {
    const stat = await client.exists(`${path}/${child}`).catch(() => null);
    if (stat) out.push({ node: `${path}/${child}`, owner: stat.ephemeralOwner });
  }
  return out;
}

function boundsFor(sessionTimeoutMs: number) {
  return { staleBoundMs: Math.round(sessionTimeoutMs / 2), progressBoundMs: 3 * sessionTimeoutMs, timeSlackMs: 1_000 };
}

/** Checks a saved history again, with today's checker, and prints the report. */
function checkAgain(file: string): number {
  const saved = JSON.parse(readFileSync(file, 'utf8')) as SavedHistory;
  const a = saved.args as unknown as Args;
  const bounds = boundsFor(a.sessionTimeoutMs);
  const result = check(saved.events, { sessionTimeoutMs: a.sessionTimeoutMs, semaphoreLeases: SEMAPHORE_LEASES, ...bounds, stopAt: saved.stopAt });
  const report = buildReport(result, saved.events, {
    seed: saved.seed,
    command: `npm run chaos -- --check ${file}`,
    transport: String(saved.args.transportUsed ?? a.transport ?? 'default'),
    policy: a.policy,
    workers: a.workers,
    sessionTimeoutMs: a.sessionTimeoutMs,
    nemesisMs: a.durationS * 1000,
    startMono: saved.clock.monoMs,
    startWall: saved.clock.wallMs,
    stopAt: saved.stopAt,
    schedule: saved.schedule as ScheduledFault[],
    historyFile: file,
    bounds,
  });
  process.stdout.write(`${report}\n`);
  return result.violations.length > 0 ? 1 : 0;
}

/** How one run files what it leaves: a batch names its files by seed only, in a folder of its own. */
interface RunFiling {
  /** Print the whole report (a single run), or only a line (a batch does that). */
  readonly printReport: boolean;
  readonly byStamp: boolean;
}

/** One run, from the ensemble's start to the report. Throws when the harness cannot carry it out. */
async function runOnce(args: Args, filing: RunFiling): Promise<RunSummary> {
  const t = args.sessionTimeoutMs;
  const bounds = boundsFor(t);
  const root = `/chaos-${args.seed}`;
  const paths = chaosPaths(root);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const suffix = filing.byStamp ? `-${stamp}` : '';
  mkdirSync(args.out, { recursive: true });
  const logDir = join(args.out, `logs-${args.seed}${suffix}`);
  mkdirSync(logDir, { recursive: true });
  const schedule = makeSchedule(args.seed, { durationMs: args.durationS * 1000, sessionTimeoutMs: t, workers: args.workers, kinds: args.faults, quick: args.quick, overlap: args.overlap });
  const command = replayCommand(args);
  say(`seed ${args.seed}: ${schedule.length} faults over ${args.durationS} s, ${args.workers} workers, session timeout ${t} ms`);

  const recorder = new HistoryRecorder();
  const emit = (e: HistoryEvent) => recorder.record(e);
  const startMono = now();
  const startWall = Date.now();
  const began = Date.now();
  const children: ChildLines[] = [];
  const proxies: FaultProxy[] = [];
  let cluster: TestingCluster | undefined;
  let inspector: ZkClient | undefined;
  let transport = args.transport ?? 'default';
  let stopAt = Infinity;
  try {
    // Partitions inside the ensemble need its links through proxies; other runs keep them direct.
    cluster = await TestingCluster.start(3, { forceSync: false, proxiedLinks: args.faults.some((k) => ENSEMBLE_KINDS.includes(k)) });
    say(`ensemble up: ${cluster.connectString}`);
    const register = new ChildLines('register', 'chaos/register.ts', [], emit, join(logDir, 'register.log'));
    children.push(register);
    // Start-up compiles the workload on the fly: on a loaded machine that takes minutes, and it
    // is no part of the run.
    const { port } = (await register.nextMessage(STARTUP_MS)) as { port: number };

    for (let i = 0; i < args.workers; i++) proxies.push(await FaultProxy.start(cluster.connectString));
    // Every worker starts before this process opens a ZooKeeper handle of its own: the native
    // client's sockets are inherited by children (see src/testing/spawnJvm.ts).
    const ready = new Set<number>();
    const workers = proxies.map((proxy, index) => {
      const config: WorkerConfig = {
        index,
        connectString: proxy.connectString,
        registerPort: port,
        seed: deriveSeed(args.seed, index + 1),
        sessionTimeoutMs: t,
        policy: args.policy,
        ...(args.transport ? { transport: args.transport } : {}),
        root,
      };
      return new ChildLines(`worker ${index}`, 'chaos/worker.ts', [JSON.stringify(config)], (e) => {
        if (e.type === 'note' && e.what === 'ready' && e.worker !== undefined) {
          ready.add(e.worker);
          transport = e.detail.split(',')[0].replace('transport ', '');
        }
        if (e.type === 'note' && e.what === 'crashed') say(`worker ${e.worker ?? index} crashed: ${e.detail.split('\n')[0]}`);
        emit(e);
      }, join(logDir, `worker-${index}.log`));
    });
    children.push(...workers);
    const readyBy = Date.now() + STARTUP_MS;
    while (ready.size < workers.length) {
      if (Date.now() > readyBy || workers.some((w) => w.hasExited)) throw new Error(`workers not ready: ${workers.length - ready.size} of ${workers.length} (see ${relative(process.cwd(), logDir)})`);
      await sleep(100);
    }
    say(`${workers.length} workers ready on the ${transport} transport`);
    inspector = new ZkClient({ connectString: cluster.connectString, sessionTimeoutMs: 30_000, retryPolicy: new ExponentialBackoffRetry({ baseSleepMs: 200, maxRetries: 10 }) });
    inspector.start();

    const nemesisStart = now();
    // The native transport's C client aborts the process on a reply that answers no request (see
    // the README): its workers get cut chunks only.
    const mutations: readonly MutationKind[] = transport === 'native' ? ['truncate'] : MUTATION_KINDS;
    await runNemesis(schedule, { cluster, proxies, workers, root, emit, holders: (kind) => recorder.holders(kind), mutations }, (f) =>
      say(`fault ${f.id}/${schedule.length}: ${f.kind}${f.worker !== undefined ? ` on worker ${f.worker}` : ''} for ${f.durationMs} ms (+${((now() - nemesisStart) / 1000).toFixed(0)} s)`),
    );
    say(`nemesis done; quiet for ${(3 * t) / 1000} s`);
    await sleep(3 * t);

    // The queue drains: producers stop, consumers go on until every item is handled.
    await Promise.all(workers.map((w) => w.request('stop-producing').catch(() => undefined)));
    // A queue that stops shrinking for three session timeouts is stuck. One that still shrinks is
    // given time (up to DRAIN_CAP_TIMEOUTS session timeouts): on a loaded machine the consumers
    // handle the backlog slowly, and a slow drain is not a lost item.
    const drainStart = now();
    let left = -1;
    let fewest = Infinity;
    let progressAt = drainStart;
    while (now() - progressAt < 3 * t && now() - drainStart < DRAIN_CAP_TIMEOUTS * t) {
      left = (await nodesUnder(inspector, paths.queue).catch(() => [])).length;
      if (left === 0) break;
      if (left < fewest) {
        fewest = left;
        progressAt = now();
      }
      await sleep(200);
    }
    const drainMs = (now() - drainStart).toFixed(0);
    const stalledMs = (now() - progressAt).toFixed(0);
    emit({ type: 'note', at: now(), what: 'drain', detail: left === 0 ? `drained in ${drainMs} ms` : `not drained: ${left} items left after ${drainMs} ms (the last item handled ${stalledMs} ms before)` });

    stopAt = now();
    const sessions = new Map<bigint, number>();
    await Promise.all(
      workers.map(async (w, i) => {
        try {
          const reply = await w.request('stop', {}, 6 * t);
          sessions.set(BigInt(String(reply.session)), i);
        } catch (err) {
          emit({ type: 'note', at: now(), worker: i, what: 'unexpected', detail: `did not stop: ${String(err)}` });
        }
      }),
    );
    // Every lock, latch and lease node must go: at once for live sessions, within a session timeout for old ones.
    const lockPaths = [paths.mutex, paths.rw, `${paths.sem}/locks`, `${paths.sem}/leases`, paths.latch, paths.selector, paths.queueLocks];
    const leftBy = now() + t + 2_000;
    let leftovers: Array<{ node: string; owner: bigint }> = [];
    for (;;) {
      leftovers = (await Promise.all(lockPaths.map((p) => nodesUnder(inspector as ZkClient, p)))).flat();
      if (leftovers.length === 0 || now() > leftBy) break;
      await sleep(200);
    }
    for (const l of leftovers) {
      const owner = sessions.get(l.owner);
      emit({
        type: 'note',
        at: now(),
        ...(owner !== undefined ? { worker: owner } : {}),
        what: 'leftover',
        detail: `${l.node} is left behind, owned by session 0x${l.owner.toString(16)}${owner !== undefined ? ` (worker ${owner}'s live session)` : ''}`,
      });
    }
    say(leftovers.length === 0 ? 'no node left behind' : `${leftovers.length} node(s) left behind`);
    await Promise.all(workers.map((w) => w.request('exit', {}, 10_000).catch(() => undefined)));
  } finally {
    await Promise.all(children.map((c) => c.close()));
    await Promise.all(proxies.map((p) => p.close()));
    await cluster?.close();
    // Once the servers are gone: a handle that is not connected closes at once, with nothing to
    // wait for.
    await inspector?.close().catch(() => undefined);
  }

  const events = recorder.sorted();
  const result = check(events, { sessionTimeoutMs: t, semaphoreLeases: SEMAPHORE_LEASES, ...bounds, stopAt });
  const failed = result.violations.length > 0;
  const historyFile = failed || args.saveHistory ? join(args.out, `history-seed${args.seed}${suffix}.json`) : undefined;
  if (historyFile) recorder.save(historyFile, { seed: args.seed, args: { ...args, transportUsed: transport }, clock: { wallMs: startWall, monoMs: startMono }, schedule, stopAt });
  const report = buildReport(result, events, {
    seed: args.seed,
    command,
    transport,
    policy: args.policy,
    workers: args.workers,
    sessionTimeoutMs: t,
    nemesisMs: args.durationS * 1000,
    startMono,
    startWall,
    stopAt,
    schedule,
    historyFile: historyFile ? relative(process.cwd(), historyFile) : undefined,
    bounds,
  });
  const reportFile = join(args.out, `report-seed${args.seed}${suffix}.md`);
  writeFileSync(reportFile, report);
  if (filing.printReport) process.stdout.write(`${report}\n`);
  say(`report: ${relative(process.cwd(), reportFile)}; ${recorder.size} events; ${result.violations.length} violation(s)`);
  return {
    seed: args.seed,
    transport,
    faults: result.faults.length,
    operations: operationsOf(result.counters),
    violations: result.violations.length,
    violationKinds: [...new Set(result.violations.map((v) => v.kind))],
    durationMs: Date.now() - began,
    ...(historyFile ? { historyFile: relative(process.cwd(), historyFile) } : {}),
    reportFile: relative(process.cwd(), reportFile),
  };
}

/**
 * `--runs N`: N runs back to back, seeds from the base seed on, each in the same folder of the
 * batch; a line per run on stdout as it ends, the batch's summary in the folder, and a last line.
 */
async function runBatch(args: Args): Promise<number> {
  const startedAt = new Date();
  const dir = join(args.out, `runs-seed${args.seed}x${args.runs}-${startedAt.toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(dir, { recursive: true });
  const seeds = batchSeeds(args.seed, args.runs);
  const all: RunSummary[] = [];
  const write = () =>
    writeFileSync(
      join(dir, 'summary.md'),
      summaryMarkdown(all, {
        command: `npm run chaos -- ${process.argv.slice(2).join(' ')}`,
        startedAt,
        setting: `${args.durationS} s of nemesis per run, ${args.workers} workers, session timeout ${args.sessionTimeoutMs} ms, error policy '${args.policy}'${args.overlap ? ', overlapping faults' : ''}${isDefault(args.faults) ? '' : `, faults ${args.faults.join(',')}`}`,
      }),
    );
  for (const [i, seed] of seeds.entries()) {
    const began = Date.now();
    let summary: RunSummary;
    try {
      summary = await runOnce({ ...args, seed, out: dir }, { printReport: false, byStamp: false });
    } catch (err) {
      say(`seed ${seed}: the run failed: ${err instanceof Error ? err.stack : String(err)}`);
      const first = (err instanceof Error ? err.message : String(err)).split('\n')[0];
      summary = { seed, transport: args.transport ?? 'default', faults: 0, operations: 0, violations: 0, violationKinds: [], durationMs: Date.now() - began, error: first };
    }
    all.push(summary);
    process.stdout.write(`${summaryLine(summary, i, seeds.length)}\n`);
    // Written after every run: a batch cut short still leaves what it found.
    write();
  }
  process.stdout.write(`${finalLine(all)}\n`);
  say(`summary: ${relative(process.cwd(), join(dir, 'summary.md'))}`);
  return batchExitCode(all);
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.check !== undefined) return checkAgain(args.check);
  if (args.runs > 1) return runBatch(args);
  const summary = await runOnce(args, { printReport: true, byStamp: true });
  return summary.violations > 0 ? 1 : 0;
}

if (require.main === module) {
  // Interrupted, still clean up: exiting runs the handlers that thaw and kill every worker (a
  // frozen one would otherwise stay frozen) and kill every server.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`[chaos] the run failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(2);
    },
  );
}
