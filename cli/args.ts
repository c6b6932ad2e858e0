import { validatePath } from '../src/paths';
import { isZkError } from '../src/errors';
import { ExitCode, usageError } from './errors';
import { parseFlags } from './flags';
import { SERVER_HELP, parseServerCommandLine, type ServerInvocation } from './server';

/** The commands that show a path. */
export type ViewName = 'locks' | 'leader' | 'queue' | 'tree' | 'services';
const VIEWS: readonly ViewName[] = ['locks', 'leader', 'queue', 'tree', 'services'];

/** Where the CLI connects when --connect is not given. */
export const DEFAULT_CONNECT = '127.0.0.1:2181';
/** The default bound of --timeout-ms. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** A parsed command line. */
export type Invocation =
  | { readonly kind: 'help'; readonly topic: ViewName | 'watch' | 'server' | undefined }
  /** No command at all: the usage, on stderr, and exit 2. */
  | { readonly kind: 'usage' }
  | ServerInvocation
  | { readonly kind: 'version' }
  | {
      readonly kind: 'view';
      readonly view: ViewName;
      /** `watch <view> <path>`: keep showing it as it changes. */
      readonly watch: boolean;
      readonly path: string;
      /** `services <base-path> <name>`: the service; undefined for the other commands. */
      readonly name: string | undefined;
      readonly connect: string;
      readonly json: boolean;
      readonly timeoutMs: number;
    };

const OPTIONS = {
  connect: { type: 'string', short: 'c' },
  json: { type: 'boolean' },
  'timeout-ms': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

/**
 * Reads the command line with node:util's parseArgs (strict: an unknown flag is an error).
 *
 * @throws CliError (USAGE) naming what is wrong.
 */
export function parseCommandLine(argv: readonly string[]): Invocation {
  // `server` has flags of its own.
  if (argv[0] === 'server') {
    const server = parseServerCommandLine(argv.slice(1));
    return server.kind === 'serverHelp' ? { kind: 'help', topic: 'server' } : server;
  }
  const { values, positionals } = parseFlags(argv, OPTIONS);
  if (values.version) return { kind: 'version' };
  const [first, ...rest] = positionals;
  const watch = first === 'watch';
  const [viewName, path, ...after] = watch ? rest : positionals;
  // `services` alone takes a second argument: the service whose instances to show.
  const [name, ...extra] = viewName === 'services' ? after : [undefined, ...after];
  if (values.help || first === 'help') {
    const topic = first === 'help' ? rest[0] : watch ? (viewName ?? 'watch') : first;
    return { kind: 'help', topic: VIEWS.includes(topic as ViewName) || topic === 'watch' || topic === 'server' ? (topic as ViewName | 'watch' | 'server') : undefined };
  }
  if (first === undefined) return { kind: 'usage' };
  if (viewName === undefined) throw usageError('watch needs a command and a path, as in: zk-recipes watch locks /locks/orders');
  if (!VIEWS.includes(viewName as ViewName)) {
    throw usageError(`unknown command ${JSON.stringify(viewName)}: use ${watch ? 'locks, leader, queue, tree or services' : 'locks, leader, queue, tree, services or watch'}`);
  }
  if (path === undefined) throw usageError(`${watch ? 'watch ' : ''}${viewName} needs a path, as in: zk-recipes ${watch ? 'watch ' : ''}${viewName} /locks/orders`);
  if (extra.length > 0) throw usageError(`unexpected argument ${JSON.stringify(extra[0])}: ${viewName === 'services' ? 'a base path and one service name at most' : 'one path at a time'}`);
  if (name !== undefined && (name === '' || name.includes('/') || name === '.' || name === '..')) {
    throw usageError(`a service name is one node name (no '/'), got ${JSON.stringify(name)}`);
  }
  try {
    validatePath(path);
  } catch (err) {
    throw usageError(isZkError(err) ? err.message : String(err));
  }
  return {
    kind: 'view',
    view: viewName as ViewName,
    watch,
    path,
    name,
    connect: values.connect ?? DEFAULT_CONNECT,
    json: values.json === true,
    timeoutMs: parseTimeout(values['timeout-ms']),
  };
}

function parseTimeout(text: string | undefined): number {
  if (text === undefined) return DEFAULT_TIMEOUT_MS;
  const ms = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(ms) || ms < 1 || ms > 0x7fffffff) {
    throw usageError(`--timeout-ms must be a whole number of milliseconds from 1 to 2147483647, got ${JSON.stringify(text)}`);
  }
  return ms;
}

const FLAGS = `Flags (every command):
  -c, --connect HOST:PORT[,HOST:PORT…][/chroot]   the ensemble (default ${DEFAULT_CONNECT})
      --json                                      print the report as JSON (watch: one line per change)
      --timeout-ms MS                             bound on connecting and reading (default ${DEFAULT_TIMEOUT_MS})
  -h, --help                                      this help`;

const EXIT_CODES = `Exit codes:
  ${ExitCode.OK}    the report was printed (watch: ended with Ctrl-C)
  ${ExitCode.FAILED}    another error (a ZooKeeper error such as NOAUTH)
  ${ExitCode.USAGE}    bad command line
  ${ExitCode.UNREACHABLE}    the ensemble could not be reached, or did not answer, within --timeout-ms
  ${ExitCode.NO_NODE}    the path does not exist
  ${ExitCode.NOT_A_RECIPE}    the path holds no recipe the command shows
  ${ExitCode.NO_SERVER}    server: it could not start (Java or ZooKeeper missing, a port in use), or ended on its own
  ${ExitCode.INTERRUPTED}  interrupted (Ctrl-C) before the answer`;

const TOPICS: Readonly<Record<ViewName | 'watch', string>> = {
  locks: `zk-recipes locks <path>
  The holder, then the waiters in the order they will be served, with node names, session ids,
  ages and node data. Understands Curator's and zk-recipes' InterProcessMutex (and LeaderSelector),
  InterProcessReadWriteLock (readers and writers) and InterProcessSemaphoreV2 (lease nodes, and
  the line of acquirers on its locks/ node).`,
  leader: `zk-recipes leader <path>
  The leader and the participants in election order, with their ids (node data), for a
  LeaderLatch or a LeaderSelector.`,
  queue: `zk-recipes queue <path>
  The depth, the oldest item's age and the next item, for a DistributedQueue (FIFO, priority,
  delay and id variants) or a SimpleDistributedQueue.`,
  tree: `zk-recipes tree <path>
  The nodes under a path, with the recipe each belongs to and the role of each recipe node
  (holder, waiting, leader, item…). Shows at most 25 children a node and 2000 nodes in all.`,
  services: `zk-recipes services <base-path> [<name>]
  The services registered under a base path, as Curator's curator-x-discovery lays them out
  (<base-path>/<name>/<id>), with how many instances each has; with a name, that service's
  instances: id, address, port, SSL port, registration type and payload (--json: the instances
  as JSON).`,
  watch: `zk-recipes watch <locks|leader|queue|tree|services> <path>
  Shows the view and updates it whenever it changes, using ZooKeeper watches (no polling), until
  Ctrl-C. A path that does not exist, at the start or later, is shown as missing and followed
  until it is created; one that stops holding the recipe is shown as such until it holds it again.`,
};

/** The help text: the overview, or one command's. */
export function helpText(topic: ViewName | 'watch' | 'server' | undefined): string {
  if (topic === 'server') return `${SERVER_HELP}\n\n${EXIT_CODES}\n`;
  const body =
    topic === undefined
      ? `Usage: zk-recipes <command> <path> [flags]

Shows ZooKeeper recipes as Curator and zk-recipes lay them out.

Commands:
  locks <path>            who holds a lock, and who waits, in order
  leader <path>           who leads an election, and the participants
  queue <path>            how deep a queue is, and how old its oldest item
  tree <path>             the nodes under a path, with the recipe each belongs to
  services <path> [name]  the services registered under a base path, or one's instances
  watch <command> <path>  any of the above, updated live as it changes
  server                  a ZooKeeper server for development, until Ctrl-C

Run zk-recipes <command> --help for one command.`
      : TOPICS[topic];
  return `${body}\n\n${FLAGS}\n\n${EXIT_CODES}\n`;
}
