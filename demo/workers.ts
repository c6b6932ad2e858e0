/**
 * The demo's worker processes, seen from the demo: start them, send them commands, wait for their
 * events, and stop them, by request, by SIGTERM or by SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import type { Command, WorkerEvent } from './protocol';

const WORKER = join(__dirname, 'worker.ts');
// The ZooKeeper C client opens its sockets without close-on-exec, so a worker would inherit the
// demo's own session: every worker starts under a shell that first closes what it inherited.
const CLOSE_INHERITED = 'for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && [ -e "/proc/$$/fd/$fd" ] && eval "exec $fd>&-"; done';
/** Lines of a worker's stderr kept to explain its failure. */
const STDERR_TAIL = 20;

/** Every worker started and not yet exited, so that none outlives the demo. */
const live = new Set<Worker>();

/** Stops every live worker (SIGTERM, then SIGKILL after `timeoutMs`). */
export async function stopAllWorkers(timeoutMs: number): Promise<void> {
  await Promise.all([...live].map((w) => w.stop(timeoutMs)));
}

/** A worker process. */
export class Worker {
  /** Every event so far, in order. */
  readonly events: WorkerEvent[] = [];
  /** Emits 'event' for each event, and 'exit' with the code and the signal. */
  readonly emitter = new EventEmitter();
  /** The worker's session as 0x hex, once it is ready. */
  session = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private stdout = '';
  private readonly stderrLines: string[] = [];
  private gone = false;

  constructor(
    readonly name: string,
    connectString: string,
    sessionTimeoutMs: number,
  ) {
    const node = [process.execPath, '-r', require.resolve('ts-node/register/transpile-only'), WORKER, name, connectString, String(sessionTimeoutMs)];
    this.child = spawn('bash', ['-c', `${CLOSE_INHERITED}\nexec "$@"`, name, ...node], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdin?.on('error', () => undefined);
    this.child.stdout?.setEncoding('utf8');
    this.child.stdout?.on('data', (chunk: string) => this.onStdout(chunk));
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (chunk: string) => {
      this.stderrLines.push(...chunk.split('\n').filter(Boolean));
      this.stderrLines.splice(0, Math.max(0, this.stderrLines.length - STDERR_TAIL));
    });
    this.emitter.setMaxListeners(0);
    live.add(this);
    this.exited = new Promise((resolve) =>
      this.child.once('close', (code, signal) => {
        this.gone = true;
        live.delete(this);
        this.emitter.emit('exit', code, signal);
        resolve({ code, signal });
      }),
    );
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get isRunning(): boolean {
    return !this.gone;
  }

  /** The end of the worker's stderr, to explain a failure. */
  stderrTail(): string {
    return this.stderrLines.join('\n');
  }

  send(command: Command): void {
    if (!this.gone) this.child.stdin?.write(`${JSON.stringify(command)}\n`);
  }

  /**
   * The first event from index `from` on that passes `test`, now or when it comes. Rejects after
   * `timeoutMs`, on an `error` event, or when the worker exits.
   */
  waitFor<E extends WorkerEvent['event']>(event: E, timeoutMs: number, from = 0, test: (e: Extract<WorkerEvent, { event: E }>) => boolean = () => true): Promise<Extract<WorkerEvent, { event: E }>> {
    type Wanted = Extract<WorkerEvent, { event: E }>;
    const matches = (e: WorkerEvent): e is Wanted => e.event === event && test(e as Wanted);
    const seen = this.events.slice(from).find(matches);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.emitter.off('event', onEvent);
        this.emitter.off('exit', onExit);
      };
      const onEvent = (e: WorkerEvent) => {
        if (matches(e)) {
          done();
          resolve(e);
        } else if (e.event === 'error') {
          done();
          reject(new Error(`${this.name}: ${e.message}`));
        }
      };
      const onExit = () => {
        done();
        reject(new Error(`${this.name} exited while the demo waited for "${event}"${this.stderrLines.length ? `:\n${this.stderrTail()}` : ''}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.name}: no "${event}" within ${timeoutMs} ms`));
      }, timeoutMs);
      if (this.gone) return onExit();
      this.emitter.on('event', onEvent);
      this.emitter.on('exit', onExit);
    });
  }

  /** Sends a signal to the worker itself (the shell before it replaced itself with `exec`). */
  kill(signal: NodeJS.Signals): void {
    if (!this.gone) this.child.kill(signal);
  }

  /** Asks the worker to close, and kills it if it has not exited within `timeoutMs`. */
  async stop(timeoutMs: number): Promise<void> {
    if (this.gone) return;
    this.kill('SIGTERM');
    const timer = setTimeout(() => this.kill('SIGKILL'), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }

  private onStdout(chunk: string): void {
    this.stdout += chunk;
    let nl: number;
    while ((nl = this.stdout.indexOf('\n')) >= 0) {
      const line = this.stdout.slice(0, nl);
      this.stdout = this.stdout.slice(nl + 1);
      let event: WorkerEvent;
      try {
        event = JSON.parse(line) as WorkerEvent;
      } catch {
        this.stderrLines.push(`[stdout] ${line}`);
        continue;
      }
      if (event.event === 'ready') this.session = event.session;
      this.events.push(event);
      this.emitter.emit('event', event);
    }
  }
}

/** Starts `names.length` workers and resolves once every one is connected; `onReady` hears of each. */
export async function startWorkers(names: readonly string[], connectString: string, sessionTimeoutMs: number, timeoutMs: number, onReady: (w: Worker) => void): Promise<Worker[]> {
  const workers = names.map((name) => new Worker(name, connectString, sessionTimeoutMs));
  await Promise.all(workers.map(async (w) => onReady(await w.waitFor('ready', timeoutMs).then(() => w))));
  return workers;
}
