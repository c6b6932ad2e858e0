import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import debug from 'debug';
import { InvalidArgumentError } from '../errors';
import { fourLetterWord, parseMode } from './fourLetterWord';
import { HarnessSetupError, locateZooKeeper } from './installation';
import { freePorts } from './ports';
import { spawnGuardedJvm } from './spawnJvm';

const log = debug('zk-recipes:testing:server');

/** Options of a test server. Defaults are in `TestingServer.DEFAULTS`. */
export interface TestingServerOptions {
  /** Client port; a free loopback port when omitted or 0 (as with `listen(0)`), kept across restarts. */
  port?: number;
  /** Data directory; a new temporary directory by default (removed by `close()`). */
  dataDir?: string;
  /** ZooKeeper's tick: heartbeats, election and sync limits are counted in ticks. */
  tickTimeMs?: number;
  /** Shortest session timeout granted; ZooKeeper's default is 2 ticks. */
  minSessionTimeoutMs?: number;
  /** Longest session timeout granted; 60 s here, so clients get what they ask for despite the short tick. */
  maxSessionTimeoutMs?: number;
  /** fsync the transaction log on every write (ZooKeeper's default). `false` writes `forceSync=no`, faster for tests. */
  forceSync?: boolean;
  /** How often the server reaps empty container nodes and expired TTL nodes. */
  containerCheckIntervalMs?: number;
  /** Extra zoo.cfg lines. */
  config?: Record<string, string | number>;
  /** Extra JVM options. */
  jvmOptions?: string[];
  /** Start the JVM tuned for quick start-up (C1 only, serial GC). Turn off for benchmarks. */
  fastStartup?: boolean;
  /** How long `start()` waits for the server to serve requests. */
  startTimeoutMs?: number;
  /** Server log level (slf4j-simple): 'error', 'warn', 'info', 'debug'. */
  logLevel?: string;
}

/** Settings that make a server one member of an ensemble; used by TestingCluster. */
export interface QuorumMembership {
  readonly serverId: number;
  /** `server.N=...` lines of every member. */
  readonly serverLines: readonly string[];
  /**
   * Dynamic reconfiguration on: the server lines carry each member's client address (none is given
   * otherwise), and after its first start the server keeps its membership in its own files.
   */
  readonly reconfig?: boolean;
}

const DEFAULTS = Object.freeze({
  tickTimeMs: 200,
  maxSessionTimeoutMs: 60_000,
  forceSync: true,
  containerCheckIntervalMs: 100,
  fastStartup: true,
  startTimeoutMs: 60_000,
  stopTimeoutMs: 15_000,
  logLevel: 'warn',
});

/** Every server process this module started and has not seen exit, so none outlives the run. */
const live = new Set<TestingServer>();
process.once('exit', () => {
  for (const server of live) server.killNow();
});

function waitForExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * A real ZooKeeper server in a child JVM, for tests: Curator's TestingServer for Node.
 *
 * - Free loopback port, temporary data directory, test-friendly config: `maxClientCnxns=0`, every
 *   four-letter word allowed, TTL nodes enabled, a short container check interval.
 * - `stop()` keeps the data, so sessions survive `restart()`; `kill()` is a SIGKILL; `pause()` and
 *   `resume()` are SIGSTOP and SIGCONT; `close()` kills the server and removes its data.
 * - `start()` resolves once the server answers `srvr` as serving, not when its port opens.
 * - No server outlives the process that started it, even when that process crashes.
 *
 * @example
 * ```ts
 * await using server = await TestingServer.start();
 * const client = new ZkClient({ connectString: server.connectString });
 * ```
 */
export class TestingServer implements AsyncDisposable {
  static readonly DEFAULTS = DEFAULTS;

  private readonly options: Required<Omit<TestingServerOptions, 'port' | 'dataDir' | 'minSessionTimeoutMs' | 'maxSessionTimeoutMs'>> &
    TestingServerOptions;
  private child: ChildProcess | undefined;
  private javaPid: number | undefined;
  private paused = false;
  private closed = false;
  private ownsDataDir = false;
  private portValue: number | undefined;
  private dir: string | undefined;
  private readonly logDir: string;

  /** Creates and starts a standalone server. */
  static async start(options: TestingServerOptions = {}): Promise<TestingServer> {
    const server = new TestingServer(options);
    try {
      await server.start();
    } catch (err) {
      await server.close();
      throw err;
    }
    return server;
  }

  constructor(options: TestingServerOptions = {}, private readonly membership?: QuorumMembership) {
    for (const key of ['port', 'tickTimeMs', 'minSessionTimeoutMs', 'maxSessionTimeoutMs', 'containerCheckIntervalMs', 'startTimeoutMs'] as const) {
      const v = options[key];
      if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < 0)) {
        throw new InvalidArgumentError(`${key} must be a non-negative integer, got ${String(v)}`);
      }
    }
    if (options.port !== undefined && options.port > 65_535) throw new InvalidArgumentError(`port must be at most 65535, got ${options.port}`);
    this.options = { ...DEFAULTS, config: {}, jvmOptions: [], ...options };
    // Port 0 means "pick one", as for a socket; ZooKeeper itself would refuse it.
    this.portValue = options.port === 0 ? undefined : options.port;
    this.dir = options.dataDir;
    this.logDir = mkdtempSync(join(tmpdir(), 'zk-recipes-log-'));
  }

  /** The client port. Known once started (or when given). */
  get port(): number {
    if (this.portValue === undefined) throw new Error('the server has not been started yet');
    return this.portValue;
  }

  /** `127.0.0.1:<port>`. */
  get connectString(): string {
    return `127.0.0.1:${this.port}`;
  }

  get dataDir(): string {
    if (this.dir === undefined) throw new Error('the server has not been started yet');
    return this.dir;
  }

  /** This member's id in an ensemble; 1 for a standalone server. */
  get serverId(): number {
    return this.membership?.serverId ?? 1;
  }

  /** Whether the JVM is running (paused counts as running). */
  get isRunning(): boolean {
    return this.child !== undefined;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** The server's own log, for diagnosing a failed test. */
  readLog(): string {
    const file = join(this.logDir, 'server.log');
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  }

  /** Starts the server, or does nothing when it runs. Resolves when it serves requests. */
  async start(): Promise<void> {
    if (this.closed) throw new Error('the server is closed');
    if (this.child) return;
    if (this.portValue === undefined) [this.portValue] = await freePorts(1);
    if (this.dir === undefined) {
      this.dir = mkdtempSync(join(tmpdir(), 'zk-recipes-data-'));
      this.ownsDataDir = true;
    }
    this.writeConfig();
    const install = locateZooKeeper();
    const o = this.options;
    const jvm = [
      ...(o.fastStartup ? ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xss512k', '-XX:-UsePerfData'] : []),
      '-Xms32m',
      '-Xmx512m',
      '-Djava.net.preferIPv4Stack=true',
      `-Dorg.slf4j.simpleLogger.defaultLogLevel=${o.logLevel}`,
      '-Dorg.slf4j.simpleLogger.showDateTime=true',
      '-Dzookeeper.admin.enableServer=false',
      '-Dzookeeper.jmx.log4j.disable=true',
      `-Dznode.container.checkIntervalMs=${o.containerCheckIntervalMs}`,
      ...o.jvmOptions,
    ];
    // The JVM cannot outlive this process, nor inherit the ZooKeeper C client's sockets: see spawnJvm.
    const { child, pid } = spawnGuardedJvm({
      java: install.java,
      jvmOptions: jvm,
      classpath: install.classpath,
      mainClass: 'org.apache.zookeeper.server.quorum.QuorumPeerMain',
      args: [this.configFile],
      stdio: 'log',
      logFile: join(this.logDir, 'server.log'),
      name: 'zk-server',
    });
    this.child = child;
    this.paused = false;
    live.add(this);
    child.stdin?.on('error', () => undefined);
    child.once('exit', (code, signal) => {
      log('server %d on port %d exited (%s)', this.serverId, this.portValue, signal ?? code);
      if (this.child === child) {
        this.child = undefined;
        this.javaPid = undefined;
        this.paused = false;
        live.delete(this);
      }
      child.stdin?.destroy();
    });
    this.javaPid = await pid.catch(() => {
      throw new HarnessSetupError(`the server process ended at once:\n${this.readLog()}`);
    });
    log('server %d starting on port %d (pid %d, %s)', this.serverId, this.portValue, this.javaPid, install.source);
    await this.waitUntilServing(child);
  }

  private get configFile(): string {
    return join(this.logDir, 'zoo.cfg');
  }

  private writeConfig(): void {
    const o = this.options;
    const reconfig = this.membership?.reconfig === true;
    // ZooKeeper rewrites the file of a member with reconfiguration on, and keeps the membership
    // in a file of its own: a restart starts from those, not from the first membership.
    if (reconfig && existsSync(this.configFile)) return;
    const lines: Record<string, string | number> = {
      tickTime: o.tickTimeMs,
      initLimit: 20,
      syncLimit: 10,
      dataDir: this.dataDir,
      clientPort: this.port,
      clientPortAddress: '127.0.0.1',
      maxClientCnxns: 0,
      '4lw.commands.whitelist': '*',
      'admin.enableServer': 'false',
      extendedTypesEnabled: 'true',
      forceSync: o.forceSync ? 'yes' : 'no',
      ...(o.minSessionTimeoutMs !== undefined ? { minSessionTimeout: o.minSessionTimeoutMs } : {}),
      maxSessionTimeout: o.maxSessionTimeoutMs ?? DEFAULTS.maxSessionTimeoutMs,
      ...o.config,
    };
    let text = Object.entries(lines)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n');
    if (reconfig) {
      // The client address is in the server lines; `reconfig` needs no superuser.
      text = text.replace(/^clientPort(Address)?=.*\n/gm, '');
      text += '\nstandaloneEnabled=false\nskipACL=yes';
    }
    if (this.membership) {
      text += `\n${this.membership.serverLines.join('\n')}\nreconfigEnabled=${reconfig}\n`;
      if (!existsSync(this.dataDir)) mkdirSync(this.dataDir, { recursive: true });
      writeFileSync(join(this.dataDir, 'myid'), `${this.membership.serverId}\n`);
    }
    writeFileSync(this.configFile, `${text}\n`);
  }

  private async waitUntilServing(child: ChildProcess): Promise<void> {
    const deadline = Date.now() + this.options.startTimeoutMs;
    let exited = false;
    child.once('exit', () => (exited = true));
    while (Date.now() < deadline) {
      if (exited || this.child !== child) {
        throw new HarnessSetupError(`server ${this.serverId} exited while starting. Its log:\n${this.readLog().slice(-4000)}`);
      }
      if ((await this.mode()) !== undefined) {
        log('server %d serving on port %d', this.serverId, this.port);
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new HarnessSetupError(
      `server ${this.serverId} did not serve within ${this.options.startTimeoutMs} ms. Its log:\n${this.readLog().slice(-4000)}`,
    );
  }

  /** Sends a four-letter word to this server. */
  fourLetterWord(word: string, timeoutMs = 5_000): Promise<string> {
    return fourLetterWord('127.0.0.1', this.port, word, timeoutMs);
  }

  /** 'standalone', 'leader', 'follower', or undefined when the server does not serve (or is down). */
  async mode(): Promise<string | undefined> {
    if (!this.child || this.paused) return undefined;
    try {
      return parseMode(await this.fourLetterWord('srvr', 2_000));
    } catch {
      return undefined;
    }
  }

  /** Stops the server gracefully. Its data stays, so a later `start()` keeps sessions and nodes. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    if (this.paused) this.signal('SIGCONT');
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), DEFAULTS.stopTimeoutMs);
    await waitForExit(child);
    clearTimeout(timer);
  }

  /** `stop()` then `start()` on the same port with the same data. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Kills the JVM with SIGKILL: no shutdown, no goodbye to clients. The data stays. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.signal('SIGKILL');
    await waitForExit(child);
  }

  /** Freezes the JVM (SIGSTOP): connections stay open, nothing answers. */
  pause(): void {
    if (!this.child || this.paused) return;
    this.signal('SIGSTOP');
    this.paused = true;
  }

  /** Thaws a paused JVM (SIGCONT). */
  resume(): void {
    if (!this.child || !this.paused) return;
    this.signal('SIGCONT');
    this.paused = false;
  }

  /** Kills the server and removes its data and logs (the logs stay with ZK_TESTING_KEEP_LOGS=1). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.kill();
    if (this.ownsDataDir && this.dir) rmSync(this.dir, { recursive: true, force: true });
    // ZK_TESTING_KEEP_LOGS=1 keeps the server's log, for diagnosing a run after the fact.
    if (process.env.ZK_TESTING_KEEP_LOGS) log('server %d: log kept in %s', this.serverId, this.logDir);
    else rmSync(this.logDir, { recursive: true, force: true });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Synchronous SIGKILL for process exit. */
  killNow(): void {
    this.signal('SIGKILL');
  }

  private signal(sig: NodeJS.Signals): void {
    if (this.javaPid === undefined) return;
    try {
      process.kill(this.javaPid, sig);
    } catch {
      // already gone
    }
  }
}
