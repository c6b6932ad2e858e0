import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { runCli } from '../../cli/run';
import { timing } from '../helpers';

/** What a run of the CLI printed, and its exit code. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Collects what is written, line by line, and lets a test wait for a line. */
export class Lines {
  readonly lines: string[] = [];
  private partial = '';
  private waiters: Array<{ test: (line: string) => boolean; from: number; resolve: (line: string) => void }> = [];

  constructor(readonly isTTY = false) {}

  get text(): string {
    return this.lines.map((l) => `${l}\n`).join('') + this.partial;
  }

  write(chunk: string | Buffer): boolean {
    this.partial += chunk.toString();
    let nl: number;
    while ((nl = this.partial.indexOf('\n')) >= 0) {
      const line = this.partial.slice(0, nl);
      this.partial = this.partial.slice(nl + 1);
      this.lines.push(line);
      for (const w of [...this.waiters]) {
        if (this.lines.length - 1 >= w.from && w.test(line)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
    return true;
  }

  /** The first line from index `from` on that passes `test`, now or when it comes; rejects after `timeoutMs`. */
  waitFor(test: (line: string) => boolean, from = 0, timeoutMs = timing(20_000)): Promise<string> {
    const found = this.lines.slice(from).find(test);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`no matching line within ${timeoutMs} ms; output so far:\n${this.text}`));
      }, timeoutMs);
      const waiter = {
        test,
        from,
        resolve: (line: string) => {
          clearTimeout(timer);
          resolve(line);
        },
      };
      this.waiters.push(waiter);
    });
  }
}

/** Runs the CLI in this process, as the executable would with these arguments. */
export async function cli(argv: readonly string[], options: { stop?: AbortSignal; stdout?: Lines } = {}): Promise<CliRun> {
  const stdout = options.stdout ?? new Lines();
  const stderr = new Lines();
  const code = await runCli(argv, { stdout, stderr, stop: options.stop });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** Runs the CLI's JSON output through JSON.parse, failing the test with the output when it is not JSON. */
export async function cliJson<T = Record<string, unknown>>(argv: readonly string[]): Promise<T> {
  const run = await cli([...argv, '--json']);
  if (run.code !== 0) throw new Error(`zk-recipes ${argv.join(' ')} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}

const MAIN = join(__dirname, '..', '..', 'cli', 'main.ts');
// The ZooKeeper C client's sockets lack close-on-exec: the child must not keep this process's sessions.
const CLOSE_INHERITED = 'for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && [ -e "/proc/$$/fd/$fd" ] && eval "exec $fd>&-"; done';

/** Starts the CLI executable (from the sources) as a process of its own. */
export function spawnCli(argv: readonly string[]): ChildProcess {
  const node = [process.execPath, '-r', require.resolve('ts-node/register/transpile-only'), MAIN, ...argv];
  return spawn('bash', ['-c', `${CLOSE_INHERITED}\nexec "$@"`, 'zk-recipes', ...node], { stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs the CLI executable to its end; rejects if it has not ended within `timeoutMs`. */
export function cliProcess(argv: readonly string[], timeoutMs = timing(60_000)): Promise<CliRun & { signal: NodeJS.Signals | null }> {
  const child = spawnCli(argv);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`zk-recipes ${argv.join(' ')} did not end within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, timeoutMs);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, signal, stdout, stderr });
    });
  });
}
