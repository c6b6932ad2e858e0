/**
 * Curator 5 (Java) for the benchmarks: compiles bench/peers/CuratorBench.java against the Curator
 * jars the interop tests use (Debian's /usr/share/java, or CURATOR_CLASSPATH) and starts it in a
 * JVM tuned for throughput (full JIT, unlike the tests' quick-start JVMs).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { locateCurator } from '../../interop/curatorInstallation';
import { spawnGuardedJvm } from '../../src/testing/spawnJvm';
import { LineProcess, RemotePeer } from './remote';
import type { DiscoveryPicks, DiscoveryWarm, Spread } from './types';

const SOURCE = join(__dirname, 'CuratorBench.java');
const MAIN_CLASS = 'zkrecipes.bench.CuratorBench';
const CLASS_FILE = join('zkrecipes', 'bench', 'CuratorBench.class');

/** Compiles the driver once per source, classpath and javac, into a cache under os.tmpdir(). */
async function compile(): Promise<string> {
  const install = locateCurator();
  const hash = createHash('sha256').update(readFileSync(SOURCE)).update('\0').update(install.classpath).update('\0').update(install.javacVersion).digest('hex');
  const dir = join(tmpdir(), `zk-recipes-curator-bench-${hash.slice(0, 16)}`);
  if (existsSync(join(dir, CLASS_FILE))) return dir;
  const work = mkdtempSync(`${dir}.tmp-`);
  try {
    await new Promise<void>((resolve, reject) => {
      execFile(install.javac, ['-encoding', 'UTF-8', '-nowarn', '-Xlint:-path', '-d', work, '-cp', install.classpath, SOURCE], { timeout: 180_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`javac failed on ${SOURCE}:\n${stdout}${stderr}`)) : resolve(),
      );
    });
    try {
      renameSync(work, dir);
    } catch (err) {
      if (!existsSync(join(dir, CLASS_FILE))) throw err;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return dir;
}

/** The Curator driver: what every driver offers, and curator-x-discovery, which kazoo has no counterpart of. */
export class CuratorPeer extends RemotePeer {
  async discoveryRegister(basePath: string, name: string, count: number): Promise<number[]> {
    const reply = await this.proc.request('discovery.register', { basePath, name, count }, 120_000 + count * 100);
    return reply.latUs as number[];
  }

  async discoveryWarm(basePath: string, name: string): Promise<DiscoveryWarm> {
    const reply = await this.proc.request('discovery.warm', { basePath, name }, 120_000);
    return { elapsedMs: reply.elapsedMs as number, instances: reply.instances as number };
  }

  async discoveryPick(durationMs: number, check: number): Promise<DiscoveryPicks> {
    const reply = await this.proc.request('discovery.pick', { durationMs, check }, durationMs + 120_000);
    return { picks: reply.picks as number, elapsedMs: reply.elapsedMs as number, nulls: reply.nulls as number, ids: reply.ids as string[] };
  }

  async discoveryStop(): Promise<void> {
    await this.proc.request('discovery.stop', {}, 120_000);
  }
}

export async function startCurator(spread: Spread, sessionTimeoutMs: number): Promise<CuratorPeer> {
  const install = locateCurator(); // throws HarnessSetupError with the install command
  const classDir = await compile();
  const { child } = spawnGuardedJvm({
    java: install.java,
    jvmOptions: [
      '-Xms64m',
      '-Xmx512m',
      // Small thread stacks: the hand-off scenario parks one thread per waiter.
      '-Xss512k',
      '-Djava.net.preferIPv4Stack=true',
      '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
      '-Dorg.slf4j.simpleLogger.logFile=System.err',
      '-Dzookeeper.sasl.client=false',
    ],
    classpath: [classDir, install.classpath].join(delimiter),
    mainClass: MAIN_CLASS,
    stdio: 'pipe',
    name: 'curator-bench',
  });
  const proc = new LineProcess(child, 'Curator driver', 60_000);
  try {
    const versions = await proc.ready;
    return new CuratorPeer('curator', `Curator ${versions.curator ?? '5'}`, versions, proc, spread, sessionTimeoutMs);
  } catch (err) {
    await proc.close(1_000);
    throw err;
  }
}
