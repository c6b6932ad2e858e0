/**
 * The runner's side of its child processes (the register, the workers, the nemesis's helpers):
 * spawned with `node -r ts-node/register/transpile-only`, history events read from their stdout,
 * commands written to their stdin, SIGSTOP and SIGCONT for the nemesis. None outlives the runner:
 * each exits when its stdin closes, and the runner kills (and first thaws) every child that is left
 * when it exits.
 *
 * Each starts under a shell that first closes every descriptor it inherited beyond stdin, stdout
 * and stderr: the ZooKeeper C client opens its sockets without close-on-exec, and a child would
 * otherwise keep the runner's connections alive (see src/testing/spawnJvm.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseEventLine, type HistoryEvent } from './history';

const ROOT = join(__dirname, '..');
const CLOSE_INHERITED = 'for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && [ -e "/proc/$$/fd/$fd" ] && eval "exec $fd>&-"; done';

/** Spawns a TypeScript file of this repository in a Node process of its own, with piped stdio. */
function spawnNode(label: string, script: string, args: readonly string[]): ChildProcess {
  return spawn('bash', ['-c', `${CLOSE_INHERITED}\nexec "$@"`, label, process.execPath, '-r', 'ts-node/register/transpile-only', join(ROOT, script), ...args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, TS_NODE_PROJECT: join(ROOT, 'tsconfig.json') },
  });
}

/** How long a helper may take to start (compile and load) before it prints its first line. */
const HELPER_STARTUP_MS = 120_000;

/**
 * Runs a helper to its end: its first and (when there are two or more) last stdout lines parsed as
 * JSON, and how it exited. A helper that crashes (the native client can abort its process) takes
 * only itself down. `timeoutMs` counts from the helper's first line: its start-up, slow on a loaded
 * machine, has a bound of its own.
 */
export function runHelper(
  script: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<{ exit: string; first: Record<string, unknown> | undefined; result: Record<string, unknown> | undefined; stderr: string }> {
  const child = spawnNode(script, script, args);
  live.add(child);
  let stdout = '';
  let stderr = '';
  const kill = () => child.kill('SIGKILL');
  let timer = setTimeout(kill, HELPER_STARTUP_MS);
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    if (stdout === '') {
      clearTimeout(timer);
      timer = setTimeout(kill, timeoutMs);
    }
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4_000)));
  child.stdin?.on('error', () => undefined);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      live.delete(child);
      const lines = stdout.trim().split('\n');
      const parse = (line: string | undefined): Record<string, unknown> | undefined => {
        try {
          return line ? (JSON.parse(line) as Record<string, unknown>) : undefined;
        } catch {
          return undefined;
        }
      };
      resolve({ exit: signal ?? `code ${code}`, first: parse(lines[0]), result: parse(lines.length > 1 ? lines[lines.length - 1] : undefined), stderr });
    });
  });
}
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) {
    // A stopped process cannot act on SIGKILL's successor signals; SIGKILL works on it anyway, but
    // thaw it first so that nothing of it lingers in a stopped state.
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
});

interface Pending {
  resolve(reply: Record<string, unknown>): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** A child Node process that speaks JSON lines. */
export class ChildLines {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private readonly log: WriteStream;
  private nextId = 1;
  private exitInfo: string | undefined;
  private readonly firstLineWaiters: Array<(line: Record<string, unknown>) => void> = [];
  private readonly eventWaiters = new Set<{ test: (event: HistoryEvent) => boolean; wake: (event: HistoryEvent) => void }>();
  readonly exited: Promise<string>;
  /** Whether the child is stopped now, as far as the runner knows. */
  stoppedNow = false;

  /**
   * @param script the TypeScript file to run, relative to the repository
   * @param args its arguments
   * @param onEvent gets every history event the child prints
   * @param logFile receives the child's stderr
   */
  constructor(
    readonly label: string,
    script: string,
    args: readonly string[],
    onEvent: (event: HistoryEvent) => void,
    logFile: string,
  ) {
    this.log = createWriteStream(logFile, { flags: 'a' });
    this.child = spawnNode(label, script, args);
    live.add(this.child);
    this.child.stdin?.on('error', () => undefined);
    this.child.stderr?.pipe(this.log);
    const lines = createInterface({ input: this.child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      const event = parseEventLine(line);
      if (event) {
        for (const waiter of [...this.eventWaiters]) {
          if (waiter.test(event)) {
            this.eventWaiters.delete(waiter);
            waiter.wake(event);
          }
        }
        return onEvent(event);
      }
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(line) as Record<string, unknown>;
      } catch {
        this.log.write(`[stdout] ${line}\n`);
        return;
      }
      if (typeof message.reply === 'number') {
        const p = this.pending.get(message.reply);
        if (!p) return;
        this.pending.delete(message.reply);
        clearTimeout(p.timer);
        if (message.ok === false) p.reject(new Error(`${label}: ${String(message.error)}`));
        else p.resolve(message);
        return;
      }
      for (const wake of this.firstLineWaiters.splice(0)) wake(message);
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        live.delete(this.child);
        this.exitInfo = signal ?? `code ${code}`;
        for (const [id, p] of this.pending) {
          clearTimeout(p.timer);
          this.pending.delete(id);
          p.reject(new Error(`${label} exited (${this.exitInfo})`));
        }
        resolve(this.exitInfo);
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  /** The first non-event JSON line the child prints (the register's `{ready, port}`). */
  nextMessage(timeoutMs: number): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.label} said nothing within ${timeoutMs} ms`)), timeoutMs);
      this.firstLineWaiters.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
    });
  }

  /** The next event of this child that passes `test`; undefined after `timeoutMs`. */
  nextEvent(test: (event: HistoryEvent) => boolean, timeoutMs: number): Promise<HistoryEvent | undefined> {
    return new Promise((resolve) => {
      const waiter = {
        test,
        wake: (event: HistoryEvent) => {
          clearTimeout(timer);
          resolve(event);
        },
      };
      const timer = setTimeout(() => {
        this.eventWaiters.delete(waiter);
        resolve(undefined);
      }, timeoutMs);
      this.eventWaiters.add(waiter);
    });
  }

  /** Sends a command and waits for its reply. */
  request(cmd: string, args: Record<string, unknown> = {}, timeoutMs = 30_000): Promise<Record<string, unknown>> {
    if (this.exitInfo !== undefined) return Promise.reject(new Error(`${this.label} has exited (${this.exitInfo})`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.label}: no reply to ${cmd} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.child.stdin?.write(`${JSON.stringify({ ...args, id, cmd })}\n`);
    });
  }

  /** SIGSTOP: the process freezes, as in a long GC pause. */
  freeze(): void {
    this.stoppedNow = true;
    this.child.kill('SIGSTOP');
  }

  /** Notes that the child stopped itself (SIGSTOP to its own pid), so that `thaw` wakes it. */
  markFrozen(): void {
    this.stoppedNow = true;
  }

  /** SIGCONT (harmless when it is not stopped). */
  thaw(): void {
    this.stoppedNow = false;
    if (!this.hasExited) this.child.kill('SIGCONT');
  }

  /** Closes its stdin (it exits), and kills it if it has not exited within `timeoutMs`. */
  async close(timeoutMs = 10_000): Promise<void> {
    this.thaw();
    this.child.stdin?.end();
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([this.exited.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs)))]);
    clearTimeout(timer);
    if (!inTime) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
    this.log.end();
  }
}
