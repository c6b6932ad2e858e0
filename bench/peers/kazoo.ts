/** kazoo (Python) for the benchmarks: bench/kazoo_driver.py under Debian's /usr/bin/python3 (python3-kazoo). */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LineProcess, RemotePeer } from './remote';
import { spawnPiped } from './spawn';
import type { Spread } from './types';

const DRIVER = join(__dirname, '..', 'kazoo_driver.py');
export const KAZOO_PYTHON = process.env.KAZOO_PYTHON ?? '/usr/bin/python3';
export const KAZOO_HINT = 'install it with `apt-get update && apt-get install -y python3-kazoo` (Debian; runs under /usr/bin/python3)';

/** Why kazoo cannot run here, or undefined when it can. */
export function kazooMissing(): string | undefined {
  if (!existsSync(KAZOO_PYTHON)) return `${KAZOO_PYTHON} is missing: ${KAZOO_HINT}`;
  const probe = spawnSync(KAZOO_PYTHON, ['-c', 'import kazoo.client, kazoo.recipe.lock'], { encoding: 'utf8', timeout: 30_000 });
  if (probe.status !== 0) return `kazoo is not importable by ${KAZOO_PYTHON}: ${KAZOO_HINT}`;
  return undefined;
}

export async function startKazoo(spread: Spread, sessionTimeoutMs: number): Promise<RemotePeer> {
  const missing = kazooMissing();
  if (missing) throw new Error(missing);
  const child = spawnPiped(KAZOO_PYTHON, ['-u', '-B', DRIVER], 'kazoo-bench');
  const proc = new LineProcess(child, 'kazoo driver', 30_000);
  try {
    const versions = await proc.ready;
    return new RemotePeer('kazoo', `kazoo ${versions.kazoo ?? ''}`.trim(), versions, proc, spread, sessionTimeoutMs);
  } catch (err) {
    await proc.close(1_000);
    throw err;
  }
}
