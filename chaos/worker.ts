/**
 * One worker process of a chaos run: its own ZkClient (through its own FaultProxy), the workload,
 * and the line protocol with the runner.
 *
 * Started as `node -r ts-node/register/transpile-only chaos/worker.ts '<config JSON>'`. Writes history
 * events to stdout, one JSON line each; reads commands from stdin, one JSON line each
 * (`{"id":1,"cmd":"creds"}`), and answers `{"reply":1,...}` on stdout. Exits when stdin closes.
 */
import { createInterface } from 'node:readline';
import { DEFAULT_CLIENT_OPTIONS, ExponentialBackoffRetry, ZkClient, type ConnectionStateErrorPolicy, type ZkClientOptions } from '../src';
import { now, type HistoryEvent } from './history';
import { Random } from './random';
import { RegisterClient } from './registerClient';
import { Workload, chaosPaths } from './workload';

/** What the runner gives a worker. */
export interface WorkerConfig {
  readonly index: number;
  /** The worker's FaultProxy. */
  readonly connectString: string;
  readonly registerPort: number;
  readonly seed: number;
  readonly sessionTimeoutMs: number;
  readonly policy: ConnectionStateErrorPolicy;
  /** The ZkClient transport to ask for; undefined leaves the client's default. */
  readonly transport?: string;
  readonly root: string;
}

/** A command from the runner. */
export type WorkerCommand =
  | { id: number; cmd: 'creds' }
  | { id: number; cmd: 'burst'; flows: number; durationMs: number }
  | { id: number; cmd: 'freeze-in-hold' }
  | { id: number; cmd: 'stop-producing' }
  | { id: number; cmd: 'stop' }
  | { id: number; cmd: 'exit' };

/** How often the event loop is looked at, and the lateness that is worth a history event. */
const LAG_TICK_MS = 100;
const LAG_REPORT_MS = 250;

function emit(event: HistoryEvent | Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

/**
 * The client options, with `transport` only when asked for. Until ZkClient has that option only
 * the native transport exists: asking for it is then the default, and asking for another is an
 * error rather than a run that silently measures the wrong transport.
 */
export function clientOptions(config: WorkerConfig): ZkClientOptions {
  const options: ZkClientOptions & { transport?: string } = {
    connectString: config.connectString,
    sessionTimeoutMs: config.sessionTimeoutMs,
    connectionTimeoutMs: config.sessionTimeoutMs,
    retryPolicy: new ExponentialBackoffRetry({ baseSleepMs: 200, maxRetries: 3 }),
    connectionStateErrorPolicy: config.policy,
  };
  if (config.transport !== undefined) {
    const supported = 'transport' in DEFAULT_CLIENT_OPTIONS;
    if (!supported && config.transport !== 'native') {
      throw new Error(`this ZkClient has no transport option: only the native transport exists here, not '${config.transport}'`);
    }
    if (supported) options.transport = config.transport as ZkClientOptions['transport'];
  }
  return options;
}

/** The transport a client runs on, as far as it says. */
export function transportOf(client: ZkClient): string {
  return (client.options as { transport?: string }).transport ?? 'native';
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
  const worker = config.index;
  process.on('unhandledRejection', (reason) => {
    emit({ type: 'note', at: now(), worker, what: 'unhandled-rejection', detail: reason instanceof Error ? `${reason.name}: ${reason.message}\n${reason.stack}` : String(reason) });
  });
  process.on('uncaughtException', (err) => {
    emit({ type: 'note', at: now(), worker, what: 'crashed', detail: `${err.name}: ${err.message}\n${err.stack}` });
    process.exit(1);
  });

  // Before any ZooKeeper handle: the register's one connection for the whole run (see registerClient.ts).
  const register = await RegisterClient.connect(config.registerPort);
  const client = new ZkClient(clientOptions(config));
  client.on('stateChanged', (state) => emit({ type: 'state', at: now(), worker, state, session: `0x${client.sessionId.toString(16)}` }));
  client.start();
  await client.blockUntilConnected({ timeoutMs: 60_000 });

  let expected = now() + LAG_TICK_MS;
  const lagTimer = setInterval(() => {
    const t = now();
    if (t - expected > LAG_REPORT_MS) emit({ type: 'lag', at: t, worker, lagMs: t - expected });
    expected = t + LAG_TICK_MS;
  }, LAG_TICK_MS);

  const workload = new Workload({
    client,
    index: worker,
    paths: chaosPaths(config.root),
    rng: new Random(config.seed),
    register,
    emit,
    acquireTimeoutMs: 2 * config.sessionTimeoutMs,
  });
  workload.start();
  emit({ type: 'note', at: now(), worker, what: 'ready', detail: `transport ${transportOf(client)}, session 0x${client.sessionId.toString(16)}` });

  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    let command: WorkerCommand;
    try {
      command = JSON.parse(line) as WorkerCommand;
    } catch {
      return;
    }
    void handle(command).then(
      (reply) => emit({ reply: command.id, ok: true, ...reply }),
      (err: unknown) => emit({ reply: command.id, ok: false, error: String(err) }),
    );
  });
  lines.on('close', () => process.exit(0));

  async function handle(command: WorkerCommand): Promise<Record<string, unknown>> {
    switch (command.cmd) {
      case 'creds': {
        const creds = client.getSessionCredentials();
        return { sessionId: `0x${creds.sessionId.toString(16)}`, sessionPassword: creds.sessionPassword };
      }
      case 'burst':
        workload.burst(command.flows, command.durationMs);
        return {};
      case 'freeze-in-hold':
        workload.armFreeze();
        return {};
      case 'stop-producing':
        workload.stopProducing();
        return {};
      case 'stop':
        await workload.stop();
        emit({ type: 'note', at: now(), worker, what: 'stopped', detail: `session 0x${client.sessionId.toString(16)}` });
        return { session: `0x${client.sessionId.toString(16)}` };
      case 'exit':
        clearInterval(lagTimer);
        register.close();
        await client.close();
        setImmediate(() => process.exit(0));
        return {};
      default:
        throw new Error(`unknown command ${String((command as { cmd: unknown }).cmd)}`);
    }
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    emit({ type: 'note', at: now(), what: 'crashed', detail: err instanceof Error ? `${err.name}: ${err.message}\n${err.stack}` : String(err) });
    process.exit(1);
  });
}
