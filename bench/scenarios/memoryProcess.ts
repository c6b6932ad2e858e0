/**
 * Runs one of the memory-measuring processes (peers/*Child.ts) in a fresh Node process with
 * --expose-gc and reads the JSON line it prints last. Not a scenario itself: it exports no
 * `scenario`.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface MemoryReading {
  before: NodeJS.MemoryUsage;
  after: NodeJS.MemoryUsage;
}

/** Runs `peers/<script>` with `args`; rejects with its stderr when it exits other than 0. */
export function runMemoryProcess<T = MemoryReading>(script: string, args: readonly string[], name: string): Promise<T> {
  const path = join(__dirname, '..', 'peers', script);
  return new Promise((resolve, reject) => {
    // A small young generation, so that its size does not swamp the growth in RSS.
    const child = spawn(process.execPath, ['--expose-gc', '--max-semi-space-size=1', '-r', 'ts-node/register/transpile-only', path, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TS_NODE_TRANSPILE_ONLY: 'true' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the memory process (${name}) exited with ${code}: ${err.trim().slice(-2_000)}`));
      else resolve(JSON.parse(out.trim().split('\n').pop() as string) as T);
    });
  });
}
