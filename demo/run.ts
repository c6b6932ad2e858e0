/**
 * `npm run demo [-- --quick] [-- --connect HOST:PORT]`: zk-recipes at work, in a terminal.
 *
 * Starts an embedded ZooKeeper with the testing harness (or uses --connect), starts seven worker
 * processes, each with its own session, and runs four scenes: fair FIFO locking, a read-write
 * lock, leader election with the leader killed, and a queue. It ends with a summary of what it
 * checked, and exits 1 if a check failed.
 *
 * It leaves nothing behind: on the way out, Ctrl-C included, it stops every worker and the server
 * (and, with --connect, deletes the nodes it made). Workers also end when their stdin closes and
 * the server's JVM when its lifeline does, so even a killed demo leaves no process behind.
 */
import { randomBytes } from 'node:crypto';
import { RetryNTimes, ZkClient } from '../src';
import { HarnessSetupError, TestingServer } from '../src/testing';
import { parseDemoArgs, USAGE, type DemoArgs } from './args';
import { now } from './protocol';
import { fifoScene } from './scenes/fifo';
import { leaderScene } from './scenes/leader';
import { queueScene } from './scenes/queue';
import { readWriteScene } from './scenes/readWrite';
import type { SceneContext, SceneResult } from './scenes/scene';
import { Printer } from './view';
import { startWorkers, stopAllWorkers } from './workers';

/** Workers w1–w4 share the locks and the queue; w5–w7 take part in the election. */
const LOCK_WORKERS = ['w1', 'w2', 'w3', 'w4'];
const ELECTION_WORKERS = ['w5', 'w6', 'w7'];
/** Long enough that a busy machine does not expire a lock holder's session. */
const LOCK_SESSION_TIMEOUT_MS = 10_000;
/** How long a worker may take to start and connect (it compiles TypeScript as it loads). */
const WORKER_START_MS = 90_000;
/** The bound on any one wait of a scene. */
const SCENE_WAIT_MS = 60_000;
const STOP_GRACE_MS = 3_000;

class Demo {
  private readonly printer = new Printer(process.stdout, now());
  private readonly interrupt = new AbortController();
  private server: TestingServer | undefined;
  private client: ZkClient | undefined;
  private readonly root = `/zk-recipes-demo/${randomBytes(4).toString('hex')}`;
  private stopping: Promise<void> | undefined;

  constructor(private readonly args: DemoArgs) {}

  /** Runs the demo; resolves with the exit code. */
  async run(): Promise<number> {
    const { printer, args } = this;
    const electionSessionMs = args.quick ? 3_000 : 5_000;
    try {
      printer.line(printer.bold(`zk-recipes demo${args.quick ? ' (quick)' : ''}`));
      let connectString = args.connect;
      if (connectString === undefined) {
        printer.line(printer.dim('starting an embedded ZooKeeper server (the testing harness)…'));
        this.server = await TestingServer.start({ forceSync: false });
        connectString = this.server.connectString;
        printer.line(`ZooKeeper (${(await this.server.mode()) ?? 'standalone'}) on ${connectString}`);
      } else {
        printer.line(`ZooKeeper at ${connectString}; working under ${this.root}`);
      }
      this.checkInterrupt();

      printer.line(printer.dim(`starting ${LOCK_WORKERS.length + ELECTION_WORKERS.length} worker processes, each with its own ZooKeeper session…`));
      const ready = (w: { name: string; pid?: number; session: string }) => printer.event(now(), w.name, `ready: pid ${w.pid}, session ${w.session}`);
      const [lockWorkers, electionWorkers] = await Promise.all([
        startWorkers(LOCK_WORKERS, connectString, LOCK_SESSION_TIMEOUT_MS, WORKER_START_MS, ready),
        startWorkers(ELECTION_WORKERS, connectString, electionSessionMs, WORKER_START_MS, ready),
      ]);
      this.checkInterrupt();

      this.client = new ZkClient({ connectString, sessionTimeoutMs: LOCK_SESSION_TIMEOUT_MS, retryPolicy: new RetryNTimes({ n: 20, sleepMsBetweenRetries: 250 }) });
      this.client.start();
      await this.client.blockUntilConnected({ timeoutMs: SCENE_WAIT_MS, signal: this.interrupt.signal });
      // A container: once the demo deletes its own root, nothing of it is left.
      await this.client.ensurePath(this.root, { container: true });

      const ctx: SceneContext = {
        printer,
        client: this.client,
        root: this.root,
        workers: new Map([...lockWorkers, ...electionWorkers].map((w) => [w.name, w])),
        quick: args.quick,
        waitMs: SCENE_WAIT_MS,
        signal: this.interrupt.signal,
      };
      const results: SceneResult[] = [];
      results.push(await fifoScene(ctx));
      this.checkInterrupt();
      results.push(await readWriteScene(ctx));
      this.checkInterrupt();
      results.push(await leaderScene(ctx, electionSessionMs));
      this.checkInterrupt();
      results.push(await queueScene(ctx));

      printer.line();
      printer.line(printer.bold('Summary'));
      const width = Math.max(...results.map((r) => r.title.length));
      for (const r of results) printer.line(`  ${r.ok ? '✓' : '✗'} ${r.title.padEnd(width)}  ${r.summary}`);
      const ok = results.every((r) => r.ok);
      printer.line();
      printer.line(ok ? 'Every check held.' : 'A CHECK FAILED: see above.');
      return ok ? 0 : 1;
    } catch (err) {
      if (this.interrupt.signal.aborted) return 130;
      if (err instanceof HarnessSetupError) {
        // Java or ZooKeeper is missing: the message names the install command.
        process.stderr.write(`demo: ${err.message}\n`);
      } else {
        process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
      }
      return 1;
    } finally {
      await this.stop();
    }
  }

  /** Stops every worker and the server (and deletes the demo's nodes on another ensemble). Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await stopAllWorkers(STOP_GRACE_MS);
      const client = this.client;
      if (client) {
        if (this.args.connect !== undefined && client.isConnected) {
          await client.delete(this.root, { recursive: true, quietly: true, signal: AbortSignal.timeout(STOP_GRACE_MS) }).catch(() => undefined);
        }
        await client.close();
      }
      await this.server?.close();
    })();
    return this.stopping;
  }

  /** Ctrl-C: stop everything, then exit 130. A second Ctrl-C exits at once (the lifelines still end every child). */
  onSignal(signal: NodeJS.Signals): void {
    if (this.interrupt.signal.aborted) process.exit(130);
    this.printer.line();
    this.printer.line(`${signal}: stopping the workers${this.server ? ' and the server' : ''}…`);
    this.interrupt.abort(new Error(signal));
    void this.stop().finally(() => {
      this.printer.line('stopped; nothing is left running.');
      process.exit(130);
    });
  }

  private checkInterrupt(): void {
    if (this.interrupt.signal.aborted) throw this.interrupt.signal.reason;
  }
}

async function main(): Promise<number> {
  let args: DemoArgs;
  try {
    args = parseDemoArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`demo: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const demo = new Demo(args);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => demo.onSignal(signal));
  return demo.run();
}

void main().then((code) => {
  process.exitCode = code;
  // Everything is closed by now; a native handle left open must not keep the demo alive.
  setTimeout(() => process.exit(code), 1_000).unref();
});
