import { LeaderLatch } from '../../recipes/leader';
import { ExitCode } from '../../cli/errors';
import { Perms, type ZkClient } from '../../src';
import { FaultProxy, freePorts } from '../../src/testing';
import { eventually, randomRoot, timing } from '../helpers';
import { useZooKeeper } from '../fixture';
import { cli, cliProcess } from './cliTesting';

/** One line, ending in a newline, with no sign of a stack trace. */
function expectOneLine(stderr: string): void {
  expect(stderr).toMatch(/^zk-recipes: [^\n]+\n$/);
  expect(stderr).not.toMatch(/\bat .+:\d+:\d+/);
}

describe('zk-recipes CLI errors: one line on stderr and a documented exit code', () => {
  let client: ZkClient;
  let connect: string[];
  let root: string;
  let latch: LeaderLatch;
  const zk = useZooKeeper({ closeClients: 'file', beforeClose: () => latch?.close() });

  beforeAll(async () => {
    client = await zk.clients.connect({ connectString: zk.server.connectString });
    connect = ['--connect', zk.server.connectString];
    root = randomRoot('cli');
    await client.create(`${root}/plain/a`, { createParents: 'persistent' });
    await client.create(`${root}/plain/b`);
    latch = new LeaderLatch(client, `${root}/election`, { id: 'x' });
    latch.start();
    await eventually('the latch node', () => latch.ourPath !== undefined);
  });

  it('bad command lines: exit 2, before connecting', async () => {
    // Nothing listens on this --connect: a usage error must not wait for it.
    const [port] = await freePorts(1);
    const nowhere = ['--connect', `127.0.0.1:${port}`];
    const cases: Array<[string[], RegExp]> = [
      [['frob', '/x'], /^zk-recipes: unknown command "frob": use locks, leader, queue, tree, services or watch\n$/],
      [['locks'], /needs a path/],
      [['locks', 'relative/path'], /path "relative\/path" must start with '\/'/],
      [['locks', '/a//b'], /empty segment/],
      [['locks', '/x', '/y'], /unexpected argument "\/y"/],
      [['locks', '/x', '--bogus'], /Unknown option '--bogus'/],
      [['locks', '/x', '--timeout-ms', 'soon'], /--timeout-ms must be a whole number/],
      [['locks', '/x', '--timeout-ms=0'], /--timeout-ms must be a whole number/],
      [['locks', '/x', '--connect', 'no-port'], /^zk-recipes: --connect: must be "host:port/],
      [['watch'], /watch needs a command and a path/],
      [['watch', 'locks'], /watch locks needs a path/],
      [['watch', 'watch', '/x'], /unknown command "watch": use locks, leader, queue, tree or services/],
    ];
    for (const [argv, message] of cases) {
      const started = Date.now();
      // Later flags win: a case's own --connect stands.
      const run = await cli([...nowhere, ...argv]);
      expect({ argv, code: run.code }).toEqual({ argv, code: ExitCode.USAGE });
      expect(run.stderr).toMatch(message);
      expectOneLine(run.stderr);
      expect(run.stdout).toBe('');
      // Far below the default --timeout-ms that connecting to `nowhere` would take.
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  });

  it('no arguments: the usage on stderr, exit 2', async () => {
    const run = await cli([]);
    expect(run.code).toBe(ExitCode.USAGE);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^Usage: zk-recipes <command>/);
    expect(run.stderr).toContain('  2    bad command line');
    const asProcess = await cliProcess([]);
    expect({ code: asProcess.code, stdout: asProcess.stdout }).toEqual({ code: ExitCode.USAGE, stdout: '' });
    expect(asProcess.stderr).toMatch(/^Usage: zk-recipes <command>/);
  });

  it('help: exit 0, with the exit codes', async () => {
    for (const argv of [['--help'], ['help'], ['locks', '--help'], ['help', 'watch'], ['watch', 'tree', '-h']]) {
      const run = await cli(argv);
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      expect(run.stdout).toContain('Exit codes:');
      expect(run.stdout).toContain('  3    the ensemble could not be reached');
    }
    expect((await cli(['locks', '--help'])).stdout).toMatch(/^zk-recipes locks <path>\n/);
    expect((await cli(['watch', '--help'])).stdout).toMatch(/^zk-recipes watch <locks\|leader\|queue\|tree\|services> <path>\n/);
    expect((await cli(['--version'])).stdout).toMatch(/^zk-recipes \d+\.\d+\.\d+\n$/);
  });

  it('an unreachable ensemble: exit 3 within --timeout-ms', async () => {
    const [port] = await freePorts(1);
    for (const view of ['locks', 'leader', 'queue', 'tree']) {
      const started = Date.now();
      const run = await cli([view, '/x', '--connect', `127.0.0.1:${port}`, '--timeout-ms', '800']);
      const elapsedMs = Date.now() - started;
      expect(run.code).toBe(ExitCode.UNREACHABLE);
      expect(run.stderr).toBe(`zk-recipes: cannot reach ZooKeeper at 127.0.0.1:${port} within 800 ms: connection refused: no server listens there (connect ECONNREFUSED 127.0.0.1:${port})\n`);
      expect(elapsedMs).toBeGreaterThanOrEqual(750);
      expect(elapsedMs).toBeLessThan(800 + timing(2_000));
    }
  });

  it('an ensemble that accepts connections and never answers: exit 3 within --timeout-ms', async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    proxy.blackhole();
    const started = Date.now();
    const run = await cli(['tree', '/', '--connect', proxy.connectString, '--timeout-ms', '1000']);
    expect(run.code).toBe(ExitCode.UNREACHABLE);
    expect(run.stderr).toBe(`zk-recipes: cannot reach ZooKeeper at ${proxy.connectString} within 1000 ms: timed out (no server answered)\n`);
    expect(Date.now() - started).toBeLessThan(1_000 + timing(2_000));
  });

  it('a host that does not resolve: exit 3, saying so, not as a refusal or a time-out', async () => {
    // .invalid never resolves (RFC 2606).
    const run = await cli(['locks', '/x', '--connect', 'nosuchhost.invalid:2181', '--timeout-ms', '1500']);
    expect(run.code).toBe(ExitCode.UNREACHABLE);
    expect(run.stderr).toMatch(/^zk-recipes: cannot reach ZooKeeper at nosuchhost\.invalid:2181 within 1500 ms: host not found \(getaddrinfo (ENOTFOUND|EAI_AGAIN) nosuchhost\.invalid\)\n$/);
  });

  it('a missing path: exit 4', async () => {
    for (const view of ['locks', 'leader', 'queue', 'tree']) {
      const run = await cli([view, `${root}/missing`, ...connect]);
      expect(run.code).toBe(ExitCode.NO_NODE);
      expect(run.stderr).toBe(`zk-recipes: ${root}/missing does not exist\n`);
    }
  });

  it('a path that holds no recipe, or another one: exit 5, naming the right command', async () => {
    const plain = await cli(['locks', `${root}/plain`, ...connect]);
    expect(plain.code).toBe(ExitCode.NOT_A_RECIPE);
    expect(plain.stderr).toBe(`zk-recipes: ${root}/plain is not a lock: it holds no recipe nodes (children: a, b)\n`);
    const latchAsLock = await cli(['locks', `${root}/election`, ...connect]);
    expect(latchAsLock.code).toBe(ExitCode.NOT_A_RECIPE);
    expect(latchAsLock.stderr).toBe(`zk-recipes: ${root}/election is not a lock: it holds a LeaderLatch (try: zk-recipes leader ${root}/election)\n`);
    const latchAsQueue = await cli(['queue', `${root}/election`, ...connect]);
    expect(latchAsQueue.stderr).toMatch(/is not a queue: it holds a LeaderLatch/);
    expect((await cli(['leader', `${root}/plain`, ...connect])).stderr).toMatch(/is not an election: it holds no recipe nodes/);
    // tree shows any path: it has no recipe to miss.
    expect((await cli(['tree', `${root}/plain`, ...connect])).code).toBe(0);
  });

  it('a path the CLI may not read: exit 1 with the ZooKeeper error', async () => {
    const path = `${root}/secret`;
    await client.create(path);
    await client.setACL(path, [{ perms: Perms.ALL, scheme: 'digest', id: 'admin:AAAAAAAAAAAAAAAAAAAAAAAAAAA=' }]);
    const run = await cli(['locks', path, ...connect]);
    expect(run.code).toBe(ExitCode.FAILED);
    expect(run.stderr).toMatch(new RegExp(`^zk-recipes: NOAUTH at ${path}\\n$`));
    expectOneLine(run.stderr);
    // tree shows the rest, and says which node it could not read.
    const tree = await cli(['tree', root, ...connect]);
    expect(tree.code).toBe(0);
    expect(tree.stdout).toMatch(/── secret {2}\(not readable: NOAUTH\)\n/);
    expect(tree.stdout).toMatch(/── plain\n/);
  });

  it('as a process: the exit code, one line on stderr, never a stack trace', async () => {
    const [port] = await freePorts(1);
    const cases: Array<[string[], number]> = [
      [['locks', '/x', '--connect', `127.0.0.1:${port}`, '--timeout-ms', '500'], ExitCode.UNREACHABLE],
      [['locks', `${root}/missing`, ...connect], ExitCode.NO_NODE],
      [['leader', `${root}/plain`, ...connect], ExitCode.NOT_A_RECIPE],
      [['queue', 'nope', ...connect], ExitCode.USAGE],
      [['locks', `${root}/secret`, ...connect], ExitCode.FAILED],
    ];
    // One after the other: each process starts TypeScript, and the machine may be busy.
    for (const [argv, code] of cases) {
      const run = await cliProcess(argv);
      expect({ argv, code: run.code, signal: run.signal }).toEqual({ argv, code, signal: null });
      expect(run.stdout).toBe('');
      expectOneLine(run.stderr);
    }
    const ok = await cliProcess(['leader', `${root}/election`, ...connect]);
    expect(ok).toMatchObject({ code: 0, stderr: '' });
    expect(ok.stdout).toMatch(/LeaderLatch: leader "x", 1 participant\n/);
  });
});
