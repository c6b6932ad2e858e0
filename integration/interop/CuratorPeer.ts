import { execFile, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { constants as osConstants, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import debug from 'debug';
import { HarnessSetupError, expireSession, type SessionCredentials } from '../../src/testing';
import { spawnGuardedJvm } from '../../src/testing/spawnJvm';
import { timing } from '../helpers';
import { CURATOR_HINT, locateCurator } from '../../interop/curatorInstallation';

const log = debug('zk-recipes:interop:curator');

/** The Java source of the peer process. */
export const CURATOR_PEER_SOURCE = join(__dirname, '..', '..', 'interop', 'curator', 'CuratorPeer.java');
const MAIN_CLASS = 'zkrecipes.interop.CuratorPeer';
const MAIN_CLASS_FILE = join('zkrecipes', 'interop', 'CuratorPeer.class');

let compiled: Promise<string> | undefined;

/**
 * Compiles CuratorPeer.java, once per source, classpath and javac: into
 * `os.tmpdir()/zk-recipes-curator-<hash>`, shared by every run and Jest worker. Each compiler writes
 * into its own temporary directory and renames it into place, so racing workers never see a half
 * written cache. Resolves with the class directory.
 */
export function compileCuratorPeer(): Promise<string> {
  compiled ??= (async () => {
    const install = locateCurator();
    const source = readFileSync(CURATOR_PEER_SOURCE);
    const hash = createHash('sha256').update(source).update('\0').update(install.classpath).update('\0').update(install.javacVersion).digest('hex');
    const dir = join(tmpdir(), `zk-recipes-curator-${hash.slice(0, 16)}`);
    if (existsSync(join(dir, MAIN_CLASS_FILE))) {
      log('using compiled peer in %s', dir);
      return dir;
    }
    const started = Date.now();
    const work = mkdtempSync(`${dir}.tmp-`);
    try {
      await new Promise<void>((resolve, reject) => {
        execFile(
          install.javac,
          ['-encoding', 'UTF-8', '-nowarn', '-Xlint:-path', '-d', work, '-cp', install.classpath, CURATOR_PEER_SOURCE],
          { timeout: 120_000 },
          (err, stdout, stderr) => {
            if (err) reject(new HarnessSetupError(`javac failed on ${CURATOR_PEER_SOURCE}:\n${stdout}${stderr}\n${CURATOR_HINT}`));
            else resolve();
          },
        );
      });
      try {
        renameSync(work, dir);
      } catch (err) {
        // Another worker got there first: its classes are the same.
        if (!existsSync(join(dir, MAIN_CLASS_FILE))) throw err;
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    log('compiled the peer in %d ms into %s', Date.now() - started, dir);
    return dir;
  })();
  compiled.catch(() => (compiled = undefined));
  return compiled;
}

/** Options of a Curator peer. */
export interface CuratorPeerOptions {
  /** Session timeout Curator asks for. Default 10 s. */
  sessionTimeoutMs?: number;
  /** Curator's connection timeout; also how long the peer waits for its first connection. Default: the session timeout, at most 15 s. */
  connectionTimeoutMs?: number;
  /** How long `start()` waits for the peer to be connected and ready. Default 60 s (scaled by ZK_TEST_TIMING). */
  startTimeoutMs?: number;
  /** Default bound on one request. Default 30 s (scaled); a request with `timeoutMs` gets at least that plus 10 s. */
  requestTimeoutMs?: number;
  /** Start the JVM tuned for quick start-up (C1 only, serial GC). Turn off for benchmarks. Default true. */
  fastStartup?: boolean;
  /** Extra JVM options. */
  jvmOptions?: string[];
  /** slf4j-simple level of the peer's own log, which goes to its stderr. Default 'warn'. */
  logLevel?: string;
  /** A name for debug logs and errors. */
  label?: string;
}

/** A value in a request: the peer's JSON reader takes flat objects only. */
export type PeerArg = string | number | boolean | null | undefined;

/** A successful reply: `{ id, ok: true, ...fields }`. */
export interface PeerReply {
  readonly id: number;
  readonly ok: true;
  readonly [field: string]: unknown;
}

/** An unsolicited line from the peer: `{ event: 'isLeader', name: 'l1' }`, `{ event: 'item', name, value }`, … */
export interface PeerEvent {
  readonly event: string;
  readonly name?: string;
  readonly [field: string]: unknown;
}

/** Which event `waitForEvent` waits for: a predicate, or fields the event must have. */
export type EventMatch = ((event: PeerEvent) => boolean) | Partial<Record<string, unknown>>;

/** Options of `waitForEvent`. */
export interface WaitForEventOptions {
  /** Default 20 s, scaled by ZK_TEST_TIMING. */
  timeoutMs?: number;
  /** Only events at or after this index of `eventLog` count (see `mark()`). */
  since?: number;
  /** Stops waiting: the promise rejects with the signal's reason and the waiter takes no event. */
  signal?: AbortSignal;
}

/** A request failed: the peer replied `ok: false`, timed out, or is gone. */
export class CuratorPeerError extends Error {
  override name = 'CuratorPeerError';
  constructor(
    message: string,
    /** The command, when the error is about one. */
    readonly cmd?: string,
    /** The Java exception as the peer described it (`SimpleName: message`), for `ok: false` replies. */
    readonly javaError?: string,
  ) {
    super(message);
  }
}

interface Pending {
  readonly cmd: string;
  readonly resolve: (reply: PeerReply) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

interface Waiter {
  readonly test: (event: PeerEvent) => boolean;
  readonly since: number;
  readonly resolve: (event: PeerEvent) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

const STDERR_TAIL_CHARS = 8_000;

/** Every peer still running, so none outlives this process (the wrapper's lifeline also sees to it). */
const live = new Set<CuratorPeer>();
process.once('exit', () => {
  for (const peer of live) peer.killNow();
});

/**
 * A Java process running Apache Curator 5.x recipes, driven from tests: the other side of the
 * interop tests and the reference of the benchmarks.
 *
 * The peer holds one CuratorFramework and any number of named recipe objects. `request(cmd, args)`
 * sends one command and resolves with its reply; `ok: false` replies reject with CuratorPeerError.
 * Unsolicited events (leadership, consumed queue items, connection states) are kept in `eventLog`,
 * emitted on `events` ('event', and under their own type), and awaited with `waitForEvent`.
 * Commands on one name run in order on one Java thread (Curator's locks belong to threads); commands
 * on different names run concurrently, so a blocked acquire does not stop the peer.
 *
 * Commands (args besides `name`; replies add the fields after →):
 * - `ping` → `{pong}`; `session` → `{sessionId, sessionPassword}` (hex); `session.injectExpiration`
 *   (ZooKeeper's client-side test hook: Curator sees LOST and opens a new session; the old one lives on
 *   the server until it times out); `forget` (drop a name); `exit`.
 * - `mutex.new {path}`, `mutex.acquire {timeoutMs?}` → `{acquired}`, `mutex.release`,
 *   `mutex.isOwned` → `{owned}`, `mutex.participants` → `{participants}` (node paths).
 * - `rwlock.new {path}`, `rwlock.acquireRead|acquireWrite {timeoutMs?}` → `{acquired}`,
 *   `rwlock.releaseRead|releaseWrite`.
 * - `semaphore.new {path, maxLeases}`, `semaphore.acquire {qty, timeoutMs?}` → `{acquired, leases}`,
 *   `semaphore.releaseAll` → `{released, leases}`, `semaphore.participants`.
 * - `latch.new {path, participantId}`, `latch.start`, `latch.close {notify?}`, `latch.hasLeadership`
 *   → `{leader}`, `latch.await {timeoutMs}` → `{leader}`, `latch.leader` → `{leaderId, isLeader}`,
 *   `latch.participants` → `{ids}`, `latch.path` → `{path}`. Events `isLeader`, `notLeader`.
 * - `selector.new {path, participantId?, autoRequeue?}`, `selector.start`, `selector.release` →
 *   `{released}` (ends the takeLeadership callback), `selector.requeue`, `selector.hasLeadership`,
 *   `selector.participants`, `selector.close`. Events `takeLeadership` and `leadershipEnded
 *   {interrupted}`, the latter as the callback returns, before Curator deletes its lock node.
 * - `queue.new {path, lockPath?, consume?, kind?}` (kind 'plain', 'priority', 'delay' or 'id':
 *   Curator's DistributedQueue, DistributedPriorityQueue, DistributedDelayQueue or
 *   DistributedIdQueue of String, UTF-8 items, synchronous puts), `queue.start`,
 *   `queue.put {value, priority?, delayUntilEpochMs?, itemId?}`, `queue.remove {itemId}` → `{removed}` (id
 *   queue), `queue.close`. Event `item {value, atEpochMs}` per consumed item.
 * - `squeue.new {path}`, `squeue.offer {value}` → `{offered}`, `squeue.take {timeoutMs?}` →
 *   `{value}` (null on timeout).
 * - `discovery.new {basePath}` (a started ServiceDiscovery whose payload is the peer's
 *   `zkrecipes.interop.CuratorPeer$ServiceDetails {description, weight}`), `discovery.register`,
 *   `discovery.update`, `discovery.unregister` and `discovery.serialize {compatible?}` → `{json}`
 *   (Curator's bytes, as text), all taking an instance as `{service, instanceId, address?, port?, sslPort?,
 *   uriSpec?, serviceType?, registrationTimeUTC?, description?, weight?, enabled?}` (a payload when
 *   `description` is given); `discovery.queryForNames` → `{names}`, `discovery.queryForInstances
 *   {service}` → `{ids}`, `discovery.queryForInstance {service, instanceId}` → `{found, instanceId, address, port,
 *   sslPort, serviceType, enabled, registrationTimeUTC, uri, description, weight, json}` (json: the
 *   instance as Curator writes it back). Close with `forget`.
 * - Compressed data through Curator's default GzipCompressionProvider, bytes as base64:
 *   `gzip.create {path, base64}` (`.compressed()`, parents created), `gzip.setData {path, base64}`,
 *   `gzip.transaction {op: 'create'|'setData', path, base64}` (one compressed op in a transaction),
 *   `gzip.getData {path, decompressed?}` → `{base64}` (the stored bytes unless `decompressed`).
 * - `bench.mutexLoop {path, iterations, warmup?}` → `{count, p50Us, p90Us, p99Us, maxUs, totalMs}`.
 *
 * Events at any time: `ready {sessionId}`, `state {state}` (Curator's connection states),
 * `unhandledError`, `protocolError`, `fatal`. A missing `timeoutMs` blocks without bound (the
 * request's own timeout still applies); `id` and `cmd` are the protocol's, hence `participantId`.
 *
 * @example
 * ```ts
 * await using peer = await CuratorPeer.start(server.connectString);
 * await peer.request('latch.new', { name: 'l', path: '/election', participantId: 'java' });
 * await peer.request('latch.start', { name: 'l' });
 * await peer.waitForEvent({ event: 'isLeader', name: 'l' });
 * ```
 */
export class CuratorPeer implements AsyncDisposable {
  /** Unsolicited events, in arrival order. */
  readonly eventLog: PeerEvent[] = [];
  /** Emits 'event' for every event, and each event under its own type (`events.on('isLeader', …)`). */
  readonly events = new EventEmitter();
  /** The session id the peer reported when it became ready (hex). */
  sessionIdHex = '';

  private child: ChildProcess | undefined;
  private javaPid: number | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly waiters = new Set<Waiter>();
  private readonly consumed = new Set<number>();
  private stderrTailText = '';
  private stdoutBuffer = '';
  private gone: CuratorPeerError | undefined;
  private closing: Promise<void> | undefined;
  private readonly options: Required<Omit<CuratorPeerOptions, 'label' | 'connectionTimeoutMs'>> & CuratorPeerOptions;
  private readonly label: string;

  private constructor(readonly connectString: string, options: CuratorPeerOptions) {
    this.options = {
      sessionTimeoutMs: 10_000,
      startTimeoutMs: timing(60_000),
      requestTimeoutMs: timing(30_000),
      fastStartup: true,
      jvmOptions: [],
      logLevel: 'warn',
      ...options,
    };
    this.label = options.label ?? 'curator-peer';
    this.events.setMaxListeners(0);
  }

  /**
   * Compiles the peer if needed, starts its JVM and resolves once its client is connected.
   * Rejects with HarnessSetupError when Java, javac or Curator is missing.
   */
  static async start(connectString: string, options: CuratorPeerOptions = {}): Promise<CuratorPeer> {
    const peer = new CuratorPeer(connectString, options);
    try {
      await peer.launch();
    } catch (err) {
      await peer.close();
      throw err;
    }
    return peer;
  }

  /** The JVM's pid, for signals such as SIGSTOP. */
  get pid(): number | undefined {
    return this.javaPid;
  }

  /** Whether the process is still running. */
  get isRunning(): boolean {
    return this.child !== undefined && this.gone === undefined;
  }

  /** The last few kilobytes the peer wrote to stderr (its log). */
  stderrTail(): string {
    return this.stderrTailText;
  }

  private async launch(): Promise<void> {
    const began = Date.now();
    const classDir = await compileCuratorPeer();
    const install = locateCurator();
    const o = this.options;
    const connectionTimeoutMs = o.connectionTimeoutMs ?? Math.min(15_000, o.sessionTimeoutMs);
    const jvmOptions = [
      ...(o.fastStartup ? ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xss512k', '-XX:-UsePerfData'] : []),
      '-Xms32m',
      '-Xmx256m',
      '-Djava.net.preferIPv4Stack=true',
      `-Dorg.slf4j.simpleLogger.defaultLogLevel=${o.logLevel}`,
      '-Dorg.slf4j.simpleLogger.logFile=System.err',
      '-Dzookeeper.sasl.client=false',
      ...o.jvmOptions,
    ];
    const spawned = Date.now();
    const { child, pid } = spawnGuardedJvm({
      java: install.java,
      jvmOptions,
      classpath: [classDir, install.classpath].join(delimiter),
      mainClass: MAIN_CLASS,
      args: [this.connectString, String(o.sessionTimeoutMs), String(connectionTimeoutMs)],
      stdio: 'pipe',
      name: this.label,
    });
    this.child = child;
    live.add(this);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => this.onStdout(chunk));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => this.onStderr(chunk));
    child.once('close', (code, signal) => this.onGone(code, signal));
    this.javaPid = await pid.catch(() => {
      throw new HarnessSetupError(`the Curator peer ended at once:\n${this.stderrTailText}`);
    });
    log('%s: JVM %d started for %s', this.label, this.javaPid, this.connectString);
    const ready = await this.waitForEvent((e) => e.event === 'ready' || e.event === 'fatal', { timeoutMs: o.startTimeoutMs }).catch((err: Error) => {
      throw new HarnessSetupError(`the Curator peer did not become ready: ${err.message}`);
    });
    if (ready.event === 'fatal') throw new HarnessSetupError(`the Curator peer could not start: ${String(ready.error)}\n${this.stderrTailText}`);
    this.sessionIdHex = String(ready.sessionId ?? '');
    log('%s: ready in %d ms (%d ms in the JVM), session 0x%s', this.label, Date.now() - began, Date.now() - spawned, this.sessionIdHex);
  }

  /**
   * Sends a command and resolves with its reply. Rejects with CuratorPeerError on an `ok: false`
   * reply, when no reply comes within the bound (`options.timeoutMs`, else the peer's default,
   * stretched for commands with their own `timeoutMs`), or when the peer exits (the error then
   * holds the tail of its stderr).
   */
  request<R extends object = Record<string, unknown>>(
    cmd: string,
    args: Record<string, PeerArg> = {},
    options: { timeoutMs?: number } = {},
  ): Promise<PeerReply & R> {
    if (this.gone) return Promise.reject(this.gone);
    const stdin = this.child?.stdin;
    if (!stdin || this.closing) return Promise.reject(new CuratorPeerError(`${this.label} is closed`, cmd));
    if ('id' in args || 'cmd' in args) {
      return Promise.reject(new CuratorPeerError(`${this.label}: "id" and "cmd" are the protocol's own fields (send a participant id as participantId)`, cmd));
    }
    const id = this.nextId++;
    const own = typeof args.timeoutMs === 'number' && args.timeoutMs >= 0 ? args.timeoutMs + timing(10_000) : 0;
    const timeoutMs = options.timeoutMs ?? Math.max(this.options.requestTimeoutMs, own);
    const line = JSON.stringify({ ...args, id, cmd });
    return new Promise<PeerReply & R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new CuratorPeerError(`${this.label}: no reply to ${cmd} (#${id}) within ${timeoutMs} ms`, cmd));
      }, timeoutMs);
      this.pending.set(id, { cmd, resolve: resolve as (reply: PeerReply) => void, reject, timer });
      log('%s <- %s', this.label, line);
      stdin.write(`${line}\n`);
    });
  }

  /** The position after the last event so far: pass it as `since` to ignore earlier events. */
  mark(): number {
    return this.eventLog.length;
  }

  /**
   * Resolves with the first event that matches and that no earlier `waitForEvent` returned, looking
   * at events already received (from `since`, 0 by default) and then at new ones; rejects after
   * `timeoutMs` (20 s, scaled, by default; a number as second argument is the timeout), when
   * `signal` aborts, or when the peer exits. Because each event is returned once, waiting twice for
   * `{ event: 'takeLeadership', name: 's' }` waits for two leaderships. A waiter left behind (the
   * loser of a `Promise.race`) would still take its event: abort it with `signal`.
   */
  waitForEvent(match: EventMatch, options: number | WaitForEventOptions = {}): Promise<PeerEvent> {
    const { timeoutMs = timing(20_000), since = 0, signal } = typeof options === 'number' ? { timeoutMs: options } : options;
    const test = typeof match === 'function' ? match : (e: PeerEvent) => Object.entries(match).every(([k, v]) => e[k] === v);
    for (let i = since; i < this.eventLog.length; i++) {
      if (!this.consumed.has(i) && test(this.eventLog[i])) {
        this.consumed.add(i);
        return Promise.resolve(this.eventLog[i]);
      }
    }
    if (this.gone) return Promise.reject(this.gone);
    if (signal?.aborted) return Promise.reject(signal.reason);
    const what = typeof match === 'function' ? 'a matching event' : JSON.stringify(match);
    return new Promise<PeerEvent>((resolve, reject) => {
      const onAbort = (): void => {
        this.waiters.delete(waiter);
        clearTimeout(waiter.timer);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        test,
        since,
        resolve: (event) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(event);
        },
        reject: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          const recent = this.eventLog.slice(-10).map((e) => JSON.stringify(e));
          waiter.reject(new CuratorPeerError(`${this.label}: no ${what} within ${timeoutMs} ms; last events: ${recent.join(' ') || '(none)'}`));
        }, timeoutMs),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
    });
  }

  /** The peer's current session, for `expireSession` from `src/testing`. */
  /**
   * Expires this peer's session on the server, for real. The JVM is frozen (SIGSTOP) meanwhile:
   * a running Java client reconnects within a millisecond when the second handle takes its
   * session over, and would win the session back before the close request lands. Thawed, the
   * peer finds its session expired and Curator reports LOST.
   */
  async expireSession(): Promise<void> {
    const credentials = await this.sessionCredentials();
    const pid = this.javaPid;
    if (pid === undefined) throw new Error(`${this.label} has no running JVM`);
    process.kill(pid, 'SIGSTOP');
    try {
      await expireSession(credentials);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
  }

  async sessionCredentials(): Promise<SessionCredentials> {
    const reply = await this.request<{ sessionId: string; sessionPassword: string }>('session');
    return { connectString: this.connectString, sessionId: BigInt(`0x${reply.sessionId}`), sessionPassword: reply.sessionPassword };
  }

  /**
   * Asks the peer to exit (it closes its recipes and its client, so its session ends at once),
   * and kills it if it has not exited within `timeoutMs`. Idempotent.
   */
  close(timeoutMs = timing(10_000)): Promise<void> {
    this.closing ??= (async () => {
      const child = this.child;
      if (!child || this.gone) return;
      const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
      if (this.sessionIdHex) {
        // A peer that never became ready reads no commands yet: it is killed at once below.
        // Request id 0: its reply is expected by no one.
        child.stdin?.write(`${JSON.stringify({ id: 0, cmd: 'exit' })}\n`);
      }
      let timer: NodeJS.Timeout | undefined;
      const inTime = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), this.sessionIdHex ? timeoutMs : 0))),
      ]);
      clearTimeout(timer);
      if (!inTime) {
        log('%s: killing JVM %s', this.label, String(this.javaPid));
        this.killNow();
        if (this.javaPid === undefined) child.kill('SIGKILL');
        await exited;
      }
    })();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** SIGKILL, synchronously: for process exit, and for tests that want the peer to die abruptly. */
  killNow(): void {
    if (this.javaPid === undefined || this.gone) return;
    try {
      process.kill(this.javaPid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  // ------------------------------------------------------------------ process output

  private onStdout(chunk: string): void {
    this.stdoutBuffer += chunk;
    let nl: number;
    while ((nl = this.stdoutBuffer.indexOf('\n')) >= 0) {
      const line = this.stdoutBuffer.slice(0, nl);
      this.stdoutBuffer = this.stdoutBuffer.slice(nl + 1);
      if (line.trim() !== '') this.onLine(line);
    }
  }

  private onLine(line: string): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      log('%s: not JSON on stdout: %s', this.label, line);
      this.appendStderr(`[stdout] ${line}\n`);
      return;
    }
    log('%s -> %s', this.label, line);
    if (typeof message.event === 'string') {
      this.onEvent(message as PeerEvent);
      return;
    }
    const id = message.id;
    const pending = typeof id === 'number' ? this.pending.get(id) : undefined;
    if (!pending) {
      if (id !== 0) log('%s: reply to no pending request (late or unknown): %s', this.label, line);
      return;
    }
    this.pending.delete(id as number);
    clearTimeout(pending.timer);
    if (message.ok === true) {
      pending.resolve(message as unknown as PeerReply);
    } else {
      const javaError = String(message.error ?? 'unknown error');
      pending.reject(new CuratorPeerError(`${this.label}: ${pending.cmd} failed: ${javaError}`, pending.cmd, javaError));
    }
  }

  private onEvent(event: PeerEvent): void {
    const index = this.eventLog.length;
    this.eventLog.push(event);
    for (const w of this.waiters) {
      if (index >= w.since && w.test(event)) {
        this.waiters.delete(w);
        clearTimeout(w.timer);
        this.consumed.add(index);
        w.resolve(event);
        break;
      }
    }
    this.events.emit('event', event);
    // An 'error' event without a listener would throw; the peer sends none, but be safe.
    if (event.event !== 'error') this.events.emit(event.event, event);
  }

  private onStderr(chunk: string): void {
    for (const line of chunk.split('\n')) if (line !== '') log('%s stderr: %s', this.label, line);
    this.appendStderr(chunk);
  }

  private appendStderr(text: string): void {
    this.stderrTailText = (this.stderrTailText + text).slice(-STDERR_TAIL_CHARS);
  }

  private onGone(code: number | null, signal: NodeJS.Signals | null): void {
    live.delete(this);
    // The wrapper shell reports a JVM killed by signal N as exit code 128 + N.
    const killedBy = code !== null && code > 128 ? Object.entries(osConstants.signals).find(([, n]) => n === code - 128)?.[0] : undefined;
    const how = signal ?? `code ${code}${killedBy ? `: ${killedBy}` : ''}`;
    log('%s: JVM %s exited (%s)', this.label, String(this.javaPid), how);
    this.gone = new CuratorPeerError(
      `${this.label} (pid ${String(this.javaPid)}) exited (${how}).${this.stderrTailText ? ` Its stderr ends with:\n${this.stderrTailText}` : ''}`,
    );
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(new CuratorPeerError(`${this.gone.message}\n(while waiting for ${p.cmd} #${id})`, p.cmd));
    }
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.reject(this.gone);
    }
    this.waiters.clear();
    this.child?.stdin?.destroy();
  }
}
