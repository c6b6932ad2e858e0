/**
 * The orchestrator's side of the Curator and kazoo drivers (bench/peers/CuratorBench.java,
 * bench/kazoo_driver.py): one JSON line per request on the driver's stdin, one JSON reply line per
 * request on its stdout, one request at a time. The driver first prints
 * `{"event":"ready","versions":{…}}`, and exits when its stdin closes.
 */
import type { ChildProcess } from 'node:child_process';
import type { CacheEventsRun, CacheLoad, ContendedRun, HandoffRun, LeaderFailover, LockPeer, PeerId, QueueRun, RwLockRun, Spread } from './types';

const STDERR_TAIL = 6_000;

export class LineProcess {
  private buffer = '';
  private stderrText = '';
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: Record<string, unknown>) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private readyWaiter: { resolve: (v: Record<string, string>) => void; reject: (e: Error) => void } | undefined;
  private gone: Error | undefined;
  readonly ready: Promise<Record<string, string>>;

  constructor(
    private readonly child: ChildProcess,
    readonly label: string,
    startTimeoutMs: number,
  ) {
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => this.onData(chunk));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => (this.stderrText = (this.stderrText + chunk).slice(-STDERR_TAIL)));
    child.stdin?.on('error', () => undefined);
    child.once('close', (code, signal) => this.onGone(code, signal));
    this.ready = new Promise<Record<string, string>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${label} was not ready within ${startTimeoutMs} ms${this.tail()}`)), startTimeoutMs);
      this.readyWaiter = {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    });
    this.ready.catch(() => undefined);
  }

  private tail(): string {
    return this.stderrText ? `; its stderr ends with:\n${this.stderrText}` : '';
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).trim();
      this.buffer = this.buffer.slice(nl + 1);
      if (line === '') continue;
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(line) as Record<string, unknown>;
      } catch {
        this.stderrText = `${this.stderrText}[stdout] ${line}\n`.slice(-STDERR_TAIL);
        continue;
      }
      if (message.event === 'ready') {
        this.readyWaiter?.resolve((message.versions ?? {}) as Record<string, string>);
        continue;
      }
      const p = typeof message.id === 'number' ? this.pending.get(message.id) : undefined;
      if (!p) continue;
      this.pending.delete(message.id as number);
      clearTimeout(p.timer);
      if (message.ok === true) p.resolve(message);
      else p.reject(new Error(`${this.label}: ${String(message.error)}`));
    }
  }

  private onGone(code: number | null, signal: NodeJS.Signals | null): void {
    this.gone = new Error(`${this.label} exited (${signal ?? `code ${code}`})${this.tail()}`);
    this.readyWaiter?.reject(this.gone);
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(this.gone);
    }
  }

  request(cmd: string, args: Record<string, unknown> = {}, timeoutMs = 120_000): Promise<Record<string, unknown>> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.label}: no reply to ${cmd} within ${timeoutMs} ms${this.tail()}`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.child.stdin?.write(`${JSON.stringify({ ...args, id, cmd })}\n`);
    });
  }

  /** Asks the driver to exit; kills it if it has not within `timeoutMs`. */
  async close(timeoutMs = 10_000): Promise<void> {
    if (this.gone) return;
    const exited = new Promise<void>((resolve) => this.child.once('close', () => resolve()));
    this.request('exit', {}, timeoutMs).catch(() => undefined);
    this.child.stdin?.end();
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs)))]);
    clearTimeout(timer);
    if (!inTime) {
      this.child.kill('SIGKILL');
      await exited;
    }
  }
}

function pairs(flat: readonly number[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
}

function triples(flat: readonly number[]): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  for (let i = 0; i + 2 < flat.length; i += 3) out.push([flat[i], flat[i + 1], flat[i + 2]]);
  return out;
}

/** A LockPeer whose sessions live in a driver process (what both drivers offer; a driver's own extras are in a subclass). */
export class RemotePeer implements LockPeer {
  readonly usesZooKeeper = true;

  constructor(
    readonly id: PeerId,
    readonly label: string,
    readonly versions: Record<string, string>,
    protected readonly proc: LineProcess,
    /** Session i connects to entry i mod length: sent as `connects`, the entries separated by spaces. */
    private readonly spread: Spread,
    private readonly sessionTimeoutMs: number,
  ) {}

  async open(sessions: number): Promise<void> {
    await this.proc.request('open', { connects: this.spread.join(' '), sessions, sessionTimeoutMs: this.sessionTimeoutMs });
  }

  async closeSessions(): Promise<void> {
    await this.proc.request('close');
  }

  async uncontended(path: string, iterations: number): Promise<number[]> {
    const reply = await this.proc.request('uncontended', { path, iterations }, 60_000 + iterations * 50);
    return reply.latUs as number[];
  }

  async contended(path: string, durationMs: number): Promise<ContendedRun> {
    const reply = await this.proc.request('contended', { path, durationMs }, durationMs + 120_000);
    return {
      counts: reply.counts as number[],
      elapsedMs: reply.elapsedMs as number,
      violations: reply.violations as number,
      holds: pairs(reply.holds as number[]),
    };
  }

  async handoffQueue(path: string, waiters: number, holdMs: number): Promise<void> {
    await this.proc.request('handoff.queue', { path, waiters, holdMs }, 120_000 + waiters * 100);
  }

  async handoffRun(): Promise<HandoffRun> {
    const reply = await this.proc.request('handoff.run', {}, 600_000);
    return { acquiredUs: reply.acquiredUs as number[], releasedUs: reply.releasedUs as number[], violations: reply.violations as number };
  }

  async rwlock(path: string, durationMs: number, writePercent: number): Promise<RwLockRun> {
    const reply = await this.proc.request('rwlock', { path, durationMs, writePercent }, durationMs + 120_000);
    return {
      reads: reply.reads as number[],
      writes: reply.writes as number[],
      elapsedMs: reply.elapsedMs as number,
      violations: reply.violations as number,
      maxReaders: reply.maxReaders as number,
      holds: triples(reply.holds as number[]),
      note: typeof reply.note === 'string' ? reply.note : undefined,
    };
  }

  async leaderStart(path: string): Promise<void> {
    await this.proc.request('leader.start', { path }, 60_000);
  }

  async leaderFailover(): Promise<LeaderFailover> {
    const reply = await this.proc.request('leader.failover', {}, 60_000);
    return { failoverUs: reply.failoverUs as number, leaders: reply.leaders as number, elections: reply.elections as number, violations: reply.violations as number };
  }

  async leaderStop(): Promise<void> {
    await this.proc.request('leader.stop', {}, 60_000);
  }

  async queuePrepare(path: string, producers: number, consumers: number, items: number): Promise<void> {
    await this.proc.request('queue.prepare', { path, producers, consumers, items }, 60_000);
  }

  async queueRun(): Promise<QueueRun> {
    const reply = await this.proc.request('queue.run', {}, 600_000);
    return { elapsedMs: reply.elapsedMs as number, received: (reply.received as number[][]).map(pairs) };
  }

  async cacheLoad(path: string): Promise<CacheLoad> {
    const reply = await this.proc.request('cache.load', { path }, 600_000);
    return { elapsedMs: reply.elapsedMs as number, nodes: reply.nodes as number };
  }

  async cacheExpect(changes: number): Promise<void> {
    await this.proc.request('cache.expect', { changes });
  }

  async cacheAwait(timeoutMs: number): Promise<CacheEventsRun> {
    const reply = await this.proc.request('cache.await', { timeoutMs }, timeoutMs + 60_000);
    return { elapsedMs: reply.elapsedMs as number, events: reply.events as number };
  }

  async cacheStop(): Promise<void> {
    await this.proc.request('cache.stop');
  }

  async shutdown(): Promise<void> {
    await this.proc.close();
  }
}
