/** The machine and the software the results were measured on. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { transportFactory, type TransportName } from '../src/client/chooseTransport';

const ROOT = join(__dirname, '..');

function run(cmd: string, args: string[]): string | undefined {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30_000, cwd: ROOT });
  if (r.status !== 0) return undefined;
  return `${r.stdout}${r.stderr}`.trim();
}

function packageVersion(dir: string): string {
  try {
    return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export interface Machine {
  cpu: string;
  cores: number;
  node: string;
  java: string;
  python: string;
  /** Version and git commit. */
  zkRecipes: string;
  /** package.json's version. */
  zkRecipesVersion: string;
  binding: string;
}

const cache = new Map<string, Machine>();

/** Memoised: it runs git and java. */
export function machine(python: string): Machine {
  const known = cache.get(python);
  if (known) return known;
  const head = run('git', ['rev-parse', '--short', 'HEAD']);
  const dirty = (run('git', ['status', '--porcelain', '--untracked-files=no']) ?? '') !== '';
  const java = (run('java', ['-version']) ?? 'not found').split('\n')[0].replace(/^openjdk version /, 'OpenJDK ');
  const found: Machine = {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: cpus().length,
    node: process.version,
    java,
    python: `${run(python, ['--version']) ?? 'not found'} (${python})`,
    zkRecipesVersion: packageVersion(ROOT),
    zkRecipes: `${packageVersion(ROOT)}${head ? ` (git ${head}${dirty ? ' with uncommitted changes' : ''})` : ''}`,
    binding: packageVersion(join(ROOT, 'node_modules', 'zookeeper')),
  };
  cache.set(python, found);
  return found;
}

/** The client's transports this machine runs: the protocol one always, the native one when its binding is built. */
export function builtTransports(): TransportName[] {
  try {
    transportFactory('native');
    return ['protocol', 'native'];
  } catch {
    return ['protocol'];
  }
}
