/**
 * `npm run bench -- [suites…] [--quick] [--connect host:port | --ensemble N] [sizes…]`
 *
 * Suites: the scenarios in bench/scenarios/ (`uncontended`, `contended`, `handoff`, `rwlock`,
 * `leader`, `queue`, `cache`, `transports`, `memory`, `discovery`, `waiters`; all of them when none is named) and `client` (the
 * client framework against the bare binding). zk-recipes runs on each transport.
 *
 * Starts an embedded ZooKeeper through the testing harness (full JIT, fsync off), or an ensemble of N
 * of them (--ensemble N: uncontended, contended and handoff only; session i of every library on one
 * member, see deployment.ts), or uses the server given with --connect, and measures zk-recipes,
 * Curator 5 (a Java driver), kazoo (a Python driver) and, in the first two scenarios, a Redis lock
 * as an outside reference: same scenarios, same session counts, same server, libraries interleaved
 * round by round. A library that is not installed is skipped with a note naming its install
 * command.
 *
 * Sizes and lengths: --sessions 2,8,32 (contended), --waiters 100,1000 (handoff), --sizes N,M
 * (both of those), --handoff-sessions 4, --hold-ms N (handoff: each waiter's critical section), --rounds N (leader: failovers per library), --duration ms
 * (contended, rwlock), --iterations N (uncontended), --rw-sessions 8 (rwlock), --participants 5
 * (leader), --queue-sizes 1,4 (queue: N producers × N consumers), --queue-items M (queue),
 * --cache-nodes N (cache), --discovery-instances N (discovery), --libs zk-recipes,curator,kazoo,redis.
 *
 * --quick is a smoke run with tiny sizes (CI): its figures mean nothing, no goal fails it, and it
 * writes bench/results-quick.md (never bench/results.md). A run of every scenario writes
 * bench/results.md and bench/results.svg; a run of some writes bench/results/<suites>.md. An
 * ensemble run says so in its headings and its file names (results/<suites>-ensemble3.md,
 * results-quick-ensemble3.md), so that it sits beside the standalone run. The
 * process exits non-zero when a library failed or a lock's holds overlapped, never over a timing.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ZkClient } from '../src';
import { HarnessSetupError } from '../src/testing';
import { transportFactory } from '../src/client/chooseTransport';
import { clientTable, runClientBench } from './client';
import { ENSEMBLE_SIZES, external, startEnsemble, startStandalone, type Deployment } from './deployment';
import { machine } from './env';
import { startCurator } from './peers/curator';
import { KAZOO_PYTHON, kazooMissing, startKazoo } from './peers/kazoo';
import { REDIS_MUTEX_OPTIONS, RedisPeer, redisMissing } from './peers/redis';
import { PEER_ORDER, type LockPeer, type PeerId, type SkippedPeer, type Spread } from './peers/types';
import { ZkRecipesPeer } from './peers/zkRecipes';
import { handOffsWithinProcess } from '../recipes/locks/localHandOff';
import { goalsTable, ratioChart } from './report';
import { loadScenarios } from './scenarios';
import type { BenchContext, BenchOptions, Goal, RatioBar, Scenario } from './scenarios/types';
import { ServerProbe } from './server';

const SESSION_TIMEOUT_MS = 30_000;
/** The scenarios an ensemble run measures: the mutex's, where the production shape changes the figures most. */
const ENSEMBLE_SUITES: readonly string[] = ['uncontended', 'contended', 'handoff'];

interface Args {
  suites: string[];
  quick: boolean;
  connect: string | undefined;
  /** Members of the ensemble to start (--ensemble), instead of one server. */
  ensemble: number | undefined;
  sessions: number[] | undefined;
  waiters: number[] | undefined;
  handoffSessions: number | undefined;
  holdMs: number | undefined;
  rounds: number | undefined;
  durationMs: number | undefined;
  iterations: number | undefined;
  rwSessions: number[] | undefined;
  participants: number | undefined;
  queueSizes: number[] | undefined;
  queueItems: number | undefined;
  cacheNodes: number | undefined;
  discoveryInstances: number | undefined;
  libs: PeerId[] | undefined;
  /** Whether waiters of the bench's process hand a mutex to each other as in one process (see recipes/locks/localHandOff.ts); off: as across processes. */
  localHandOff: boolean;
}

function positiveInts(flag: string, value: string | undefined): number[] {
  const list = (value ?? '').split(',').filter((s) => s.trim() !== '').map(Number);
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`${flag} takes positive integers separated by commas, got ${String(value)}`);
  return list;
}

function positiveInt(flag: string, value: string | undefined): number {
  const list = positiveInts(flag, value);
  if (list.length !== 1) throw new Error(`${flag} takes one positive integer, got ${String(value)}`);
  return list[0];
}

export function parseArgs(argv: readonly string[]): Args {
  const args: Args = {
    suites: [],
    quick: false,
    connect: undefined,
    ensemble: undefined,
    sessions: undefined,
    waiters: undefined,
    handoffSessions: undefined,
    holdMs: undefined,
    rounds: undefined,
    durationMs: undefined,
    iterations: undefined,
    rwSessions: undefined,
    participants: undefined,
    queueSizes: undefined,
    queueItems: undefined,
    cacheNodes: undefined,
    discoveryInstances: undefined,
    libs: undefined,
    localHandOff: true,
  };
  let sizes: number[] | undefined;
  for (let i = 0; i < argv.length; i++) {
    let flag = argv[i];
    let value: string | undefined;
    const eq = flag.indexOf('=');
    if (flag.startsWith('--') && eq > 0) {
      value = flag.slice(eq + 1);
      flag = flag.slice(0, eq);
    }
    const next = () => value ?? argv[++i];
    switch (flag) {
      case '--quick':
        args.quick = true;
        break;
      case '--connect':
        args.connect = next();
        if (!args.connect) throw new Error('--connect takes host:port');
        break;
      case '--ensemble':
        args.ensemble = positiveInt(flag, next());
        if (args.ensemble < ENSEMBLE_SIZES.min || args.ensemble > ENSEMBLE_SIZES.max) throw new Error(`--ensemble takes ${ENSEMBLE_SIZES.min} to ${ENSEMBLE_SIZES.max} members, got ${args.ensemble}`);
        break;
      case '--sessions':
        args.sessions = positiveInts(flag, next());
        break;
      case '--waiters':
        args.waiters = positiveInts(flag, next());
        break;
      case '--sizes':
        sizes = positiveInts(flag, next());
        break;
      case '--handoff-sessions':
        args.handoffSessions = positiveInt(flag, next());
        break;
      case '--hold-ms': {
        const raw = next();
        const ms = Number(raw);
        if (raw === undefined || raw.trim() === '' || !Number.isInteger(ms) || ms < 0) throw new Error(`--hold-ms takes a whole number of milliseconds, 0 or more, got ${String(raw)}`);
        args.holdMs = ms;
        break;
      }
      case '--rounds':
        args.rounds = positiveInt(flag, next());
        break;
      case '--duration':
        args.durationMs = positiveInt(flag, next());
        break;
      case '--iterations':
        args.iterations = positiveInt(flag, next());
        break;
      case '--rw-sessions':
        args.rwSessions = positiveInts(flag, next());
        break;
      case '--participants':
        args.participants = positiveInt(flag, next());
        if (args.participants < 2) throw new Error('--participants takes 2 or more (a failover needs a next leader)');
        break;
      case '--queue-sizes':
        args.queueSizes = positiveInts(flag, next());
        break;
      case '--queue-items':
        args.queueItems = positiveInt(flag, next());
        break;
      case '--cache-nodes':
        args.cacheNodes = positiveInt(flag, next());
        break;
      case '--discovery-instances':
        args.discoveryInstances = positiveInt(flag, next());
        break;
      case '--no-local-handoff':
        args.localHandOff = false;
        break;
      case '--libs': {
        const libs = (next() ?? '').split(',').filter(Boolean) as PeerId[];
        const unknown = libs.filter((l) => !PEER_ORDER.includes(l));
        if (unknown.length > 0 || libs.length === 0) throw new Error(`--libs takes some of ${PEER_ORDER.join(',')}, got ${libs.join(',')}`);
        args.libs = libs.includes('zk-recipes') ? libs : ['zk-recipes', ...libs];
        break;
      }
      default:
        if (flag.startsWith('-')) throw new Error(`unknown flag ${flag}`);
        args.suites.push(flag);
    }
  }
  args.sessions ??= sizes;
  args.waiters ??= sizes;
  if (args.ensemble !== undefined) {
    if (args.connect !== undefined) throw new Error('--ensemble starts an ensemble of its own: not with --connect');
    const other = args.suites.filter((s) => !ENSEMBLE_SUITES.includes(s));
    if (args.suites.length === 0 || other.length > 0) throw new Error(`--ensemble runs ${ENSEMBLE_SUITES.join(', ')} only; name some of them${other.length > 0 ? `, not ${other.join(', ')}` : ''}`);
  }
  return args;
}

/** Starts the libraries the scenarios need; a missing installation is a skip, anything else an error. */
async function startPeers(args: Args, spread: Spread, scenarios: readonly Scenario[]): Promise<{ peers: LockPeer[]; skipped: SkippedPeer[] }> {
  const wanted = (id: PeerId) => !args.libs || args.libs.includes(id);
  const needsRedis = scenarios.some((s) => s.name === 'uncontended' || s.name === 'contended');
  const skipped: SkippedPeer[] = [];
  const starting: Array<Promise<LockPeer | undefined>> = [];
  const m = machine(KAZOO_PYTHON);
  const zkRecipes = new ZkRecipesPeer(spread, SESSION_TIMEOUT_MS, { 'zk-recipes': m.zkRecipes }, `zk-recipes ${m.zkRecipesVersion} (protocol)`);
  starting.push(Promise.resolve(zkRecipes));
  if (wanted('zk-recipes-native')) {
    try {
      transportFactory('native');
      starting.push(Promise.resolve(new ZkRecipesPeer(spread, SESSION_TIMEOUT_MS, { 'zk-recipes': m.zkRecipes, zookeeper: m.binding }, `zk-recipes ${m.zkRecipesVersion} (native)`, 'native')));
    } catch (err) {
      skipped.push({ id: 'zk-recipes-native', reason: (err as Error).message });
    }
  }
  if (wanted('curator')) {
    starting.push(
      startCurator(spread, SESSION_TIMEOUT_MS).catch((err: unknown) => {
        if (err instanceof HarnessSetupError) {
          skipped.push({ id: 'curator', reason: err.message });
          return undefined;
        }
        throw err;
      }),
    );
  }
  if (wanted('kazoo')) {
    const missing = kazooMissing();
    if (missing) skipped.push({ id: 'kazoo', reason: missing });
    else starting.push(startKazoo(spread, SESSION_TIMEOUT_MS));
  }
  if (wanted('redis') && needsRedis) {
    const missing = redisMissing();
    if (missing) skipped.push({ id: 'redis', reason: missing });
    else starting.push(RedisPeer.start());
  }
  const settled = await Promise.allSettled(starting);
  const peers = settled.flatMap((s) => (s.status === 'fulfilled' && s.value ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(peers.map((p) => p.shutdown().catch(() => undefined)));
    throw failed.reason;
  }
  peers.sort((a, b) => PEER_ORDER.indexOf(a.id) - PEER_ORDER.indexOf(b.id));
  return { peers, skipped };
}

function versionsTable(peers: readonly LockPeer[], skipped: readonly SkippedPeer[], zkVersion: string, deployment: Deployment): string {
  const m = machine(KAZOO_PYTHON);
  const byId = (id: PeerId) => peers.find((p) => p.id === id);
  const curator = byId('curator');
  const kazoo = byId('kazoo');
  const redis = byId('redis');
  const rows: Array<[string, string]> = [
    ['CPU', `${m.cpu}, ${m.cores} cores`],
    ['Node', m.node],
    ['Java', curator?.versions.java ?? m.java],
    ['Python', kazoo ? `${kazoo.versions.python} (${KAZOO_PYTHON})` : m.python],
    ['ZooKeeper server', deployment.describe(zkVersion)],
    ['zk-recipes', `${m.zkRecipes}; protocol transport, and native transport over the \`zookeeper\` binding ${m.binding}`],
    ['Curator', curator ? `${curator.versions.curator} (ZooKeeper Java client ${String(curator.versions.zookeeperClient).split(',')[0].replace(/-\$\{mvngit\.commit\.id\}/, '')})` : 'skipped'],
    ['kazoo', kazoo ? kazoo.versions.kazoo : 'skipped'],
    [
      'Redis reference',
      redis
        ? `redis-semaphore ${redis.versions['redis-semaphore']} Mutex (retryInterval ${REDIS_MUTEX_OPTIONS.retryInterval} ms) over node-redis ${redis.versions['node-redis']}, redis-server ${redis.versions['redis-server']} (no persistence)`
        : 'skipped or not used',
    ],
  ];
  const lines = ['| | |', '| --- | --- |', ...rows.map(([k, v]) => `| ${k} | ${v} |`)];
  for (const s of skipped) lines.push('', `- **${s.id} skipped:** ${s.reason}`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  // Every library keeps its sessions in this one process: off, zk-recipes' waiters learn of a win as in separate processes.
  if (!args.localHandOff) handOffsWithinProcess(false);
  const all = loadScenarios();
  const suites = args.suites.length > 0 ? args.suites : all.map((s) => s.name);
  for (const s of suites) {
    if (s !== 'client' && !all.some((x) => x.name === s)) throw new Error(`unknown suite ${s}; suites: client, ${all.map((x) => x.name).join(', ')}`);
  }
  const scenarios = all.filter((s) => suites.includes(s.name));
  const quick = args.quick;
  const options: BenchOptions = {
    quick,
    sessions: args.sessions ?? (quick ? [2, 8] : [2, 8, 32]),
    waiters: args.waiters ?? (quick ? [5, 10] : [100, 1000]),
    handoffSessions: args.handoffSessions ?? (quick ? 2 : 4),
    holdMs: args.holdMs ?? 0,
    rounds: args.rounds,
    durationMs: args.durationMs,
    iterations: args.iterations,
    rwSessions: args.rwSessions ?? [8],
    participants: args.participants ?? (quick ? 3 : 5),
    queueSizes: args.queueSizes ?? [1, 4],
    queueItems: args.queueItems,
    cacheNodes: args.cacheNodes,
    discoveryInstances: args.discoveryInstances,
  };
  const began = Date.now();
  const log = (message: string) => console.error(`[bench ${((Date.now() - began) / 1000).toFixed(1).padStart(5)} s] ${message}`);

  if (args.ensemble !== undefined) log(`starting a ${args.ensemble}-node ensemble …`);
  const deployment = args.connect ? external(args.connect) : args.ensemble !== undefined ? await startEnsemble(args.ensemble) : await startStandalone();
  const { connectString, spread } = deployment;
  // On an ensemble the probe reads the members in the spread's order, so its per-member figures line up with it.
  const probe = ServerProbe.forConnectString(spread.join(','));
  let peers: LockPeer[] = [];
  let skipped: SkippedPeer[] = [];
  const sections: string[] = [];
  const goals: Goal[] = [];
  const bars: RatioBar[] = [];
  const failures: string[] = [];
  const root = `/bench-${randomBytes(4).toString('hex')}`;
  try {
    const overhead = await probe.calibrate();
    log(`server ${connectString}: ZooKeeper ${probe.version}${deployment.members ? ` (${deployment.members})` : ''}; a measurement's own srvr readings add ${overhead.packets} packets`);
    // Drivers start before any ZooKeeper handle opens in this process (see peers/spawn.ts).
    if (scenarios.length > 0) {
      ({ peers, skipped } = await startPeers(args, spread, scenarios));
      log(`libraries: ${peers.map((p) => p.label).join(', ')}${skipped.length ? `; skipped: ${skipped.map((s) => s.id).join(', ')}` : ''}`);
      for (const s of skipped) log(`${s.id} skipped: ${s.reason}`);
    }
    const ctx: BenchContext = { connectString, spread, headingSuffix: deployment.headingSuffix, members: deployment.members, probe, peers, skipped, options, sessionTimeoutMs: SESSION_TIMEOUT_MS, root, log };
    for (const suite of suites) {
      if (suite === 'client') {
        log('client: framework overhead per operation against the native binding …');
        const rows = await runClientBench({ connectString, quick });
        sections.push(['## Client framework overhead', '', clientTable(rows)].join('\n'));
        continue;
      }
      const scenario = scenarios.find((s) => s.name === suite) as Scenario;
      const result = await scenario.run(ctx);
      // A smoke run's figures mean nothing: no goal is judged on them.
      if (quick) for (const g of result.goals) if (g.status !== 'not measured') g.status = 'not judged';
      sections.push(result.goals.length > 0 ? `${result.markdown}\n\nGoals:\n\n${goalsTable(result.goals)}` : result.markdown);
      goals.push(...result.goals);
      bars.push(...result.bars);
      failures.push(...result.failures);
    }
    const moved = deployment.check(probe);
    if (moved) failures.push(moved);
    if (args.connect) {
      const cleaner = new ZkClient({ connectString, sessionTimeoutMs: SESSION_TIMEOUT_MS });
      cleaner.start();
      const connected = await cleaner.blockUntilConnected({ timeoutMs: 10_000 }).then(() => true, () => false);
      if (connected) await cleaner.delete(root, { recursive: true, quietly: true }).catch(() => undefined);
      await cleaner.close();
    }
  } finally {
    await Promise.all(peers.map((p) => p.shutdown().catch(() => undefined)));
    await deployment.close();
  }

  const elapsedS = (Date.now() - began) / 1000;
  const argv = process.argv.slice(2);
  const command = argv.length > 0 ? `npm run bench -- ${argv.join(' ')}` : 'npm run bench';
  const header = [
    `${scenarios.length > 0 ? '# zk-recipes lock benchmarks' : '# zk-recipes benchmarks'}${deployment.headingSuffix}`,
    '',
    `Generated ${new Date().toISOString()} by \`${command}\` in ${elapsedS.toFixed(0)} s.`,
    '',
    quick
      ? '> **Quick smoke run (`--quick`): tiny sizes, the figures mean nothing and no goal is judged by them.**'
      : '> Absolute times depend on the machine (and on what else runs on it) and are labelled as such; the claim is the **ratios**: zk-recipes ÷ Curator and zk-recipes ÷ kazoo, measured on the same server, with the same session counts, libraries interleaved round by round. Each library keeps all its sessions in one process.',
    '',
    '## Machine and versions',
    '',
    scenarios.length > 0
      ? versionsTable(peers, skipped, probe.version, deployment)
      : `${machine(KAZOO_PYTHON).cores} × ${machine(KAZOO_PYTHON).cpu}, Node ${process.version}, ZooKeeper ${probe.version}${args.connect ? ` (external: ${args.connect})` : ' (embedded)'}, zk-recipes ${machine(KAZOO_PYTHON).zkRecipes}.`,
    scenarios.length === 0
      ? ''
      : `\nEvery library uses ${SESSION_TIMEOUT_MS / 1000} s sessions and a standard retry policy (Curator: ExponentialBackoffRetry(1000, 3); kazoo and zk-recipes: their defaults), ${deployment.ensembleSize ? `on the same ${deployment.ensembleSize}-node ensemble, session i of every library on the same member (${deployment.members}, in turn)` : 'on the same server'}, with fresh lock paths per run. Each library keeps all its sessions in one process: zk-recipes, the floor, the naive lock and Redis in the bench's Node process, Curator in one JVM, kazoo in one Python process.`,
  ].join('\n');
  const goalSection = scenarios.length > 0 ? ['## Goals', '', goalsTable(goals)].join('\n') : '';
  const doc = [header, goalSection, sections.join('\n\n'), failures.length ? ['## Failures', '', ...failures.map((f) => `- ${f}`)].join('\n') : '']
    .filter((s) => s !== '')
    .join('\n\n');

  console.log(`\n${doc}\n`);
  const everyScenario = all.every((s) => suites.includes(s.name));
  let base: string | undefined;
  if (quick) base = join(__dirname, `results-quick${deployment.fileSuffix}`);
  else if (scenarios.length > 0 && everyScenario) base = join(__dirname, 'results');
  else {
    mkdirSync(join(__dirname, 'results'), { recursive: true });
    base = join(__dirname, 'results', `${suites.join('-')}${deployment.fileSuffix}`);
  }
  const svgName = `${base.split('/').pop()}.svg`;
  const withChart = scenarios.length > 0 ? doc.replace('## Goals', `![zk-recipes ÷ Curator and ÷ kazoo](${svgName})\n\n## Goals`) : doc;
  writeFileSync(`${base}.md`, `${withChart}\n`);
  if (scenarios.length > 0) {
    const subtitle = quick
      ? `quick smoke run${deployment.headingSuffix}: not meaningful`
      : `${machine(KAZOO_PYTHON).cpu}, ${machine(KAZOO_PYTHON).cores} cores; ZooKeeper ${probe.version}${deployment.headingSuffix}; ratios are zk-recipes ÷ the other library`;
    writeFileSync(`${base}.svg`, ratioChart(bars, subtitle));
  }
  log(`wrote ${base}.md${scenarios.length > 0 ? ` and ${svgName}` : ''} in ${elapsedS.toFixed(1)} s`);
  if (failures.length > 0) {
    console.error(`\n${failures.length} failure(s):\n${failures.map((f) => `  - ${f}`).join('\n')}`);
    process.exitCode = 1;
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
