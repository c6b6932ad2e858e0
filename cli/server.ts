/**
 * `zk-recipes server`: a ZooKeeper for development, in the foreground, from the testing harness.
 * It exists so that a first program has a server without a clone of this repository: the
 * harness's servers are real ZooKeeper JVMs, and it already knows how to leave nothing behind.
 */
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import debug from 'debug';
import { HarnessSetupError } from '../src/testing/installation';
import { freePorts } from '../src/testing/ports';
import { TestingServer, type TestingServerOptions } from '../src/testing/TestingServer';
import { CliError, ExitCode, usageError, type ExitCodeValue } from './errors';
import { parseFlags } from './flags';
import type { CliIo } from './io';

const log = debug('zk-recipes:cli:server');

/** `zk-recipes server` as parsed. */
export interface ServerInvocation {
  readonly kind: 'server';
  /** The first member's client port; the others follow it. 0 picks free ports. */
  readonly port: number;
  /** How many members: 1 is a standalone server. */
  readonly ensemble: number;
  /** Where the data stays (a member's in `<dataDir>/<id>`); a temporary directory, removed on exit, when undefined. */
  readonly dataDir: string | undefined;
}

/** The port a development server takes by default: ZooKeeper's own, and the README's programs'. */
export const DEFAULT_SERVER_PORT = 2181;
/** The largest ensemble `--ensemble` starts. */
const MAX_ENSEMBLE = 9;
/** How often the members are checked for a JVM that ended on its own. Reads nothing but our own state. */
const CHECK_MS = 500;

/** The install command the missing-Java-or-ZooKeeper line names. */
export const SERVER_INSTALL_HINT =
  'install them with `apt-get install -y zookeeper default-jre-headless` (Debian, Ubuntu), ' +
  'or run ZooKeeper in Docker: `docker run --rm -p 127.0.0.1:2181:2181 zookeeper:3.8`';

export const SERVER_HELP = `zk-recipes server [--port ${DEFAULT_SERVER_PORT}] [--ensemble N] [--data-dir DIR]
  Runs a ZooKeeper server for development in the foreground, until Ctrl-C (or SIGTERM), and
  prints its connect string. Nothing is left behind: the JVMs end with it, and so does the data
  unless --data-dir keeps it. Needs Java and ZooKeeper's jars (Debian: apt-get install -y
  zookeeper default-jre-headless; or ZOOKEEPER_HOME / ZOOKEEPER_CLASSPATH). Not for production:
  short ticks, every four-letter word open, loopback only.

Flags:
      --port PORT       the client port (default ${DEFAULT_SERVER_PORT}); an ensemble's members take PORT, PORT+1, …;
                        0 picks free ports
      --ensemble N      start N members (1 to ${MAX_ENSEMBLE}) instead of one standalone server
      --data-dir DIR    keep the data in DIR (a member's in DIR/<id>), for a later run to find
  -h, --help            this help`;

const OPTIONS = {
  port: { type: 'string' },
  ensemble: { type: 'string' },
  'data-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * Reads `zk-recipes server`'s flags (the arguments after `server`).
 *
 * @throws CliError (USAGE) naming what is wrong.
 */
export function parseServerCommandLine(argv: readonly string[]): ServerInvocation | { readonly kind: 'serverHelp' } {
  const { values, positionals } = parseFlags(argv, OPTIONS);
  if (values.help) return { kind: 'serverHelp' };
  if (positionals.length > 0) throw usageError(`unexpected argument ${JSON.stringify(positionals[0])}: server takes only flags`);
  const ensemble = wholeNumber('--ensemble', values.ensemble, 1, 1, MAX_ENSEMBLE);
  const port = wholeNumber('--port', values.port, DEFAULT_SERVER_PORT, 0, 65_535);
  if (port !== 0 && port + ensemble - 1 > 65_535) throw usageError(`--port ${port} leaves no room for ${ensemble} members' ports`);
  const dataDir = values['data-dir'];
  if (dataDir !== undefined && dataDir.trim() === '') throw usageError('--data-dir must name a directory');
  return { kind: 'server', port, ensemble, dataDir };
}

function wholeNumber(flag: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || n < min || n > max) throw usageError(`${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return n;
}

/** Whether something already listens on 127.0.0.1:`port` (another ZooKeeper, say). */
function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(true));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(false)));
  });
}

/** The members' TestingServers, not started: a standalone server, or an ensemble's members. */
async function members(invocation: ServerInvocation): Promise<TestingServer[]> {
  const n = invocation.ensemble;
  const clientPorts = invocation.port === 0 ? await freePorts(n) : Array.from({ length: n }, (_, i) => invocation.port + i);
  for (const port of invocation.port === 0 ? [] : clientPorts) {
    if (await portInUse(port)) throw new CliError(ExitCode.NO_SERVER, `cannot start a server: port ${port} is in use (another ZooKeeper?); choose others with --port`);
  }
  const dataDirOf = (id: number): string | undefined => {
    if (invocation.dataDir === undefined) return undefined;
    const dir = n === 1 ? invocation.dataDir : join(invocation.dataDir, String(id));
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  // The harness's defaults are a test's; a developer's programs want their session timeouts granted.
  const options: TestingServerOptions = { logLevel: 'error' };
  if (n === 1) return [new TestingServer({ ...options, port: clientPorts[0], dataDir: dataDirOf(1) })];
  const quorumPorts = await freePorts(2 * n);
  const serverLines = Array.from({ length: n }, (_, i) => `server.${i + 1}=127.0.0.1:${quorumPorts[2 * i]}:${quorumPorts[2 * i + 1]}`);
  return Array.from({ length: n }, (_, i) => new TestingServer({ ...options, port: clientPorts[i], dataDir: dataDirOf(i + 1) }, { serverId: i + 1, serverLines }));
}

/** What the operator is told when a server cannot start: Java or ZooKeeper missing gets the install command. */
function cannotStart(err: unknown): CliError {
  if (err instanceof CliError) return err;
  if (err instanceof HarnessSetupError && /^Java was not found|ZooKeeper installation|ZOOKEEPER_HOME=/.test(err.message)) {
    const what = err.message.startsWith('Java') ? 'Java was not found' : `ZooKeeper's jars were not found (${err.message.split(/\. /)[0].replace(/^No ZooKeeper installation was found \((.*)\)$/, '$1')})`;
    return new CliError(ExitCode.NO_SERVER, `cannot start a server: ${what}; ${SERVER_INSTALL_HINT}`);
  }
  const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
  return new CliError(ExitCode.NO_SERVER, `cannot start a server: ${message} (DEBUG=zk-recipes:cli:server shows more)`);
}

/**
 * Runs `zk-recipes server` until `io.stop` aborts, and resolves with the exit code: OK once
 * stopped, NO_SERVER when it could not start (one line on stderr saying why and, for a missing
 * Java or ZooKeeper, the command that installs them) or when a member ended on its own.
 *
 * On stop every JVM is killed and waited for, and every temporary directory removed; a
 * `--data-dir` is kept, after a graceful stop so that its last writes are on disk.
 */
export async function runServer(invocation: ServerInvocation, io: CliIo): Promise<ExitCodeValue> {
  const stop = io.stop ?? new AbortController().signal;
  let servers: TestingServer[] = [];
  try {
    servers = await members(invocation);
    // Ctrl-C during a start is a stop: the members are closed below, however far they got.
    const starting = Promise.all(servers.map((s) => s.start()));
    // A start cut short fails once its members are closed: that is the stop, not an error.
    starting.catch(() => undefined);
    await Promise.race([starting, new Promise<void>((resolve) => stop.addEventListener('abort', () => resolve(), { once: true }))]);
    if (stop.aborted) return ExitCode.INTERRUPTED;
    const connectString = servers.map((s) => s.connectString).join(',');
    const kind = servers.length === 1 ? 'standalone' : `an ensemble of ${servers.length}`;
    const data = invocation.dataDir === undefined ? `${servers.map((s) => s.dataDir).join(', ')} (removed when it stops)` : `${invocation.dataDir} (kept)`;
    io.stdout.write(
      `ZooKeeper serving at ${connectString} (${kind}; for development only)\n` +
        `data: ${data}\n` +
        `Connect with --connect ${connectString}, or ZK=${connectString} for the README's programs. Ctrl-C stops it.\n`,
    );
    const ended = await untilStoppedOrEnded(servers, stop);
    if (ended !== undefined) {
      io.stderr.write(`zk-recipes: server ${ended.serverId} on port ${ended.port} ended on its own; stopping the rest\n`);
      return ExitCode.NO_SERVER;
    }
    return ExitCode.OK;
  } catch (err) {
    const failure = cannotStart(err);
    log('could not start: %O', err);
    io.stderr.write(`zk-recipes: ${failure.message}\n`);
    return failure.exitCode;
  } finally {
    // A kept data directory gets a graceful stop first; a temporary one is removed anyway.
    if (invocation.dataDir !== undefined) await Promise.all(servers.map((s) => s.stop()));
    await Promise.all(servers.map((s) => s.close()));
    if (servers.length > 0) log('stopped');
  }
}

/**
 * Resolves when `stop` aborts (undefined), or with a member whose JVM ended without it. A Ctrl-C
 * typed in a terminal reaches the JVMs too, which may end a moment before our own handler runs:
 * a member that ended is only reported if no stop follows within a grace period.
 */
function untilStoppedOrEnded(servers: readonly TestingServer[], stop: AbortSignal): Promise<TestingServer | undefined> {
  return new Promise((resolve) => {
    if (stop.aborted) return resolve(undefined);
    let ended: TestingServer | undefined;
    const timer = setInterval(() => {
      if (ended !== undefined) {
        done(ended);
        return;
      }
      ended = servers.find((s) => !s.isRunning);
    }, CHECK_MS);
    const onAbort = () => done(undefined);
    const done = (value: TestingServer | undefined) => {
      clearInterval(timer);
      stop.removeEventListener('abort', onAbort);
      resolve(value);
    };
    stop.addEventListener('abort', onAbort, { once: true });
  });
}
