import { setMaxListeners } from 'node:events';
import debug from 'debug';
import { ConnectionTimeoutError, isZkError } from '../src/errors';
import { isRetryableError } from '../src/retry';
import { helpText, parseCommandLine, type Invocation, type ViewName } from './args';
import type { Command, Report } from './command';
import { connectFailure, openClient } from './connect';
import { CliError, ExitCode, type ExitCodeValue } from './errors';
import type { CliIo } from './io';
import { escapeInvisible } from './format';
import { leaderCommand } from './leader';
import { locksCommand } from './locks';
import { NodeReader } from './NodeReader';
import { queueCommand } from './queue';
import { runServer } from './server';
import { servicesCommand } from './services';
import { treeCommand } from './tree';
import { watchView } from './watch';

export type { CliIo } from './io';

const log = debug('zk-recipes:cli');

/** The views, by command name. */
export const COMMANDS: Readonly<Record<ViewName, Command>> = Object.freeze({
  locks: locksCommand as unknown as Command,
  leader: leaderCommand as unknown as Command,
  queue: queueCommand as unknown as Command,
  tree: treeCommand as unknown as Command,
  services: servicesCommand as unknown as Command,
});

/**
 * Runs the operator CLI (`zk-recipes …`) on `argv` (the arguments after the executable) and
 * resolves with its exit code. Never rejects: every failure is one line on `io.stderr` (prefixed
 * `zk-recipes: `) and a code of ExitCode. Nothing it writes holds a Unicode format character or
 * line separator: node names and data come from anyone who can write to the server, so each is
 * written as a `\uXXXX` escape (see `escapeInvisible`).
 *
 * @example
 * ```ts
 * process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
 * ```
 */
export async function runCli(argv: readonly string[], cliIo: CliIo): Promise<ExitCodeValue> {
  const io = escapingIo(cliIo);
  let invocation: Invocation | undefined;
  try {
    invocation = parseCommandLine(argv);
    if (invocation.kind === 'help') {
      io.stdout.write(helpText(invocation.topic));
      return ExitCode.OK;
    }
    if (invocation.kind === 'usage') {
      io.stderr.write(helpText(undefined));
      return ExitCode.USAGE;
    }
    if (invocation.kind === 'server') return await runServer(invocation, io);
    if (invocation.kind === 'version') {
      io.stdout.write(`${version()}\n`);
      return ExitCode.OK;
    }
    const command = COMMANDS[invocation.view];
    if (invocation.watch) {
      await watchView(command, invocation, io);
      return ExitCode.OK;
    }
    await showOnce(command, invocation, io);
    return ExitCode.OK;
  } catch (err) {
    const failure = toCliError(err, invocation, io.stop);
    io.stderr.write(`zk-recipes: ${failure.message}\n`);
    return failure.exitCode;
  }
}

async function showOnce(command: Command, invocation: Extract<Invocation, { kind: 'view' }>, io: CliIo): Promise<void> {
  // One bound for the whole command: connecting and every read.
  const deadline = AbortSignal.timeout(invocation.timeoutMs);
  const signal = io.stop ? AbortSignal.any([deadline, io.stop]) : deadline;
  // Every read in flight listens to it: a tree reads many nodes at once.
  setMaxListeners(0, signal);
  // Connecting has its own bound of timeoutMs, so that running out says why (see openClient).
  const client = await openClient(invocation.connect, invocation.timeoutMs, io.stop);
  try {
    const report: Report = await command.read(new NodeReader(client, signal), invocation.path, invocation.name);
    io.stdout.write(invocation.json ? `${JSON.stringify(report, null, 2)}\n` : `${command.render(report, Date.now())}\n`);
  } finally {
    await client.close();
  }
}

/** `io` writing every text through `escapeInvisible`: one place, so that no view, error or watch line can forget it. */
function escapingIo(io: CliIo): CliIo {
  const { stdout, stderr } = io;
  return {
    stdout: { write: (text: string) => stdout.write(escapeInvisible(text)), isTTY: stdout.isTTY },
    stderr: { write: (text: string) => stderr.write(escapeInvisible(text)) },
    stop: io.stop,
  };
}

/** What the operator is told about a failure, and the exit code. */
export function toCliError(err: unknown, invocation: Invocation | undefined, stop: AbortSignal | undefined): CliError {
  if (err instanceof CliError) return err;
  const where = invocation?.kind === 'view' ? ` at ${invocation.connect}` : '';
  const within = invocation?.kind === 'view' ? ` within ${invocation.timeoutMs} ms` : '';
  if (stop?.aborted && err === stop.reason) return new CliError(ExitCode.INTERRUPTED, 'interrupted');
  if (err instanceof DOMException && err.name === 'TimeoutError') return new CliError(ExitCode.UNREACHABLE, `no answer from ZooKeeper${where}${within}`);
  if (isZkError(err)) {
    if (err.code === 'NONODE') return new CliError(ExitCode.NO_NODE, `${err.path ?? 'the path'} does not exist`);
    if (err.code === 'INVALID_ARGUMENT') return new CliError(ExitCode.USAGE, err.message);
    if (err instanceof ConnectionTimeoutError) return new CliError(ExitCode.UNREACHABLE, `cannot reach ZooKeeper${where}${within}: ${connectFailure(err.cause)}`);
    if (isRetryableError(err) || err.code === 'CLIENT_CLOSED') return new CliError(ExitCode.UNREACHABLE, `lost the connection to ZooKeeper${where}: ${err.code}`);
    // Server errors name their code first ("NOAUTH at /x"); the others get it in front.
    return new CliError(ExitCode.FAILED, err.message.startsWith(err.code) ? err.message.split('\n')[0] : `${err.code}: ${err.message.split('\n')[0]}`);
  }
  log('unexpected failure: %O', err);
  const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
  return new CliError(ExitCode.FAILED, `${message} (DEBUG=zk-recipes:cli shows more)`);
}

function version(): string {
  // One level up from cli in the sources, two from dist/cli once built.
  for (const candidate of ['../package.json', '../../package.json']) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const pkg = require(candidate) as { name?: string; version?: string };
      if (pkg.name === 'zk-recipes') return `${pkg.name} ${pkg.version}`;
    } catch {
      // not there
    }
  }
  return 'zk-recipes';
}
