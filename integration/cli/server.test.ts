import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ExitCode } from '../../cli/errors';
import { freePorts } from '../../src/testing';
import { Clients, randomRoot, timing } from '../helpers';
import { Lines, cli, spawnCli } from './cliTesting';

/** Every process below `pid`, from /proc: the wrapper shells, the JVMs and their lifeline watchers. */
function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name is in parentheses and may hold spaces: the fields after it are fixed.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // ended while we looked
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

/** Whether `pid` still runs: a zombie has ended, whoever is yet to reap it. */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** What a live process runs, for a failing assertion's message. */
function commandOf(pid: number): string {
  try {
    return `${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').slice(0, 120)}`;
  } catch {
    return `${pid} (gone)`;
  }
}

/** The directories the servers' command lines name their zoo.cfg in (the harness's temporary log directories), one each. */
function configDirsOf(pids: readonly number[]): string[] {
  // The JVM's wrapper shell carries the same command line: count each directory once.
  const dirs = new Set<string>();
  for (const pid of pids) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (args.some((a) => a.endsWith('QuorumPeerMain'))) for (const a of args.filter((arg) => arg.endsWith('zoo.cfg'))) dirs.add(dirname(a));
    } catch {
      // ended while we looked
    }
  }
  return [...dirs];
}

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** A running `zk-recipes server`, its output line by line, and how it ended once it has. */
function startServerProcess(argv: readonly string[]): { child: ChildProcess; out: Lines; stderr: () => string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const child = spawnCli(['server', ...argv]);
  const out = new Lines();
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => out.write(chunk));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  return { child, out, stderr: () => stderr, exited };
}

/** Sends `signal`, and fails the test (after a SIGKILL) if the process has not ended well within the bound. */
async function endWith(run: ReturnType<typeof startServerProcess>, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  run.child.kill(signal);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), timing(30_000));
  try {
    return await run.exited;
  } finally {
    clearTimeout(timer);
  }
}

describe('zk-recipes server: a development ZooKeeper in the foreground', () => {
  const clients = new Clients();
  afterAll(async () => {
    await clients.closeAll();
  });

  it('prints its connect string and serves; Ctrl-C (SIGINT) leaves no JVM, no data and no log directory', async () => {
    const [port] = await freePorts(1);
    const run = startServerProcess(['--port', String(port)]);
    try {
      const serving = await run.out.waitFor((l) => l.startsWith('ZooKeeper serving at '), 0, timing(90_000));
      expect(serving).toBe(`ZooKeeper serving at 127.0.0.1:${port} (standalone; for development only)`);
      const dataLine = await run.out.waitFor((l) => l.startsWith('data: '));
      const dataDir = /^data: (\S+) \(removed when it stops\)$/.exec(dataLine)?.[1] as string;
      expect(existsSync(dataDir)).toBe(true);

      const client = await clients.connect({ connectString: `127.0.0.1:${port}` });
      const path = randomRoot('cli-server');
      await client.create(path, { data: 'x', createParents: 'persistent' });
      expect((await client.getData(path)).data.toString()).toBe('x');

      const below = descendantsOf(run.child.pid as number);
      const jvmDirs = configDirsOf(below);
      expect(jvmDirs).toHaveLength(1);
      expect(existsSync(jvmDirs[0])).toBe(true);

      expect(await endWith(run, 'SIGINT')).toEqual({ code: ExitCode.OK, signal: null });
      expect(run.stderr()).toBe('');
      expect(below.filter(isAlive).map(commandOf)).toEqual([]);
      expect(existsSync(dataDir)).toBe(false);
      expect(existsSync(jvmDirs[0])).toBe(false);
      expect(await refuses(port)).toBe(true);
    } finally {
      run.child.kill('SIGKILL');
    }
  });

  it('--ensemble 3 --data-dir: three members on consecutive ports; SIGTERM stops them all and keeps the data', async () => {
    // Three consecutive free ports: a free one whose two neighbours are free as well.
    let port = 0;
    for (const candidate of await freePorts(20)) {
      if (candidate + 2 <= 65_535 && (await Promise.all([0, 1, 2].map((i) => refuses(candidate + i)))).every(Boolean)) {
        port = candidate;
        break;
      }
    }
    expect(port).toBeGreaterThan(0);
    const dataDir = mkdtempSync(join(tmpdir(), 'zk-recipes-server-test-'));
    const run = startServerProcess(['--ensemble', '3', '--port', String(port), '--data-dir', dataDir]);
    try {
      const connectString = [0, 1, 2].map((i) => `127.0.0.1:${port + i}`).join(',');
      await run.out.waitFor((l) => l === `ZooKeeper serving at ${connectString} (an ensemble of 3; for development only)`, 0, timing(120_000));
      expect(await run.out.waitFor((l) => l.startsWith('data: '))).toBe(`data: ${dataDir} (kept)`);
      const client = await clients.connect({ connectString });
      const path = randomRoot('cli-server');
      await client.create(path, { data: 'kept', createParents: 'persistent' });

      const below = descendantsOf(run.child.pid as number);
      const jvmDirs = configDirsOf(below);
      expect(jvmDirs).toHaveLength(3);
      expect(await endWith(run, 'SIGTERM')).toEqual({ code: ExitCode.OK, signal: null });
      expect(below.filter(isAlive).map(commandOf)).toEqual([]);
      expect(jvmDirs.filter((dir) => existsSync(dir))).toEqual([]);
      for (const id of [1, 2, 3]) {
        expect(readFileSync(join(dataDir, String(id), 'myid'), 'utf8').trim()).toBe(String(id));
        expect(readdirSync(join(dataDir, String(id)))).toContain('version-2');
      }
    } finally {
      run.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  describe('what it cannot do: one line, and the exit code of the table', () => {
    const saved = { ...process.env };
    afterEach(() => {
      for (const key of ['PATH', 'JAVA_HOME', 'ZOOKEEPER_HOME', 'ZOOKEEPER_CLASSPATH']) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    });

    it('without Java: names the install command', async () => {
      const empty = mkdtempSync(join(tmpdir(), 'zk-recipes-no-java-'));
      try {
        process.env.PATH = empty;
        delete process.env.JAVA_HOME;
        process.env.ZOOKEEPER_CLASSPATH = '/usr/share/java/zookeeper.jar';
        const run = await cli(['server', '--port', '0']);
        expect(run.code).toBe(ExitCode.NO_SERVER);
        expect(run.stderr).toMatch(/^zk-recipes: cannot start a server: Java was not found; install them with `apt-get install -y zookeeper default-jre-headless`[^\n]*\n$/);
        expect(run.stdout).toBe('');
      } finally {
        rmSync(empty, { recursive: true, force: true });
      }
    });

    it("without ZooKeeper's jars: names the install command", async () => {
      const empty = mkdtempSync(join(tmpdir(), 'zk-recipes-no-zk-'));
      try {
        delete process.env.ZOOKEEPER_CLASSPATH;
        process.env.ZOOKEEPER_HOME = empty;
        const run = await cli(['server', '--port', '0']);
        expect(run.code).toBe(ExitCode.NO_SERVER);
        expect(run.stderr).toMatch(/^zk-recipes: cannot start a server: ZooKeeper's jars were not found \([^\n]*\); install them with `apt-get install -y zookeeper default-jre-headless`[^\n]*\n$/);
      } finally {
        rmSync(empty, { recursive: true, force: true });
      }
    });

    it('a port in use: says so, before starting anything', async () => {
      const taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
      const port = (taken.address() as { port: number }).port;
      try {
        const run = await cli(['server', '--port', String(port)]);
        expect(run).toEqual({ code: ExitCode.NO_SERVER, stdout: '', stderr: `zk-recipes: cannot start a server: port ${port} is in use (another ZooKeeper?); choose others with --port\n` });
      } finally {
        await new Promise<void>((resolve) => taken.close(() => resolve()));
      }
    });

    it('bad flags: exit 2 before starting anything', async () => {
      const cases: Array<[string[], RegExp]> = [
        [['server', '--port', 'x'], /--port must be a whole number from 0 to 65535, got "x"/],
        [['server', '--port', '70000'], /--port must be a whole number/],
        [['server', '--ensemble', '0'], /--ensemble must be a whole number from 1 to 9/],
        [['server', '--ensemble', '3', '--port', '65534'], /leaves no room for 3 members' ports/],
        [['server', 'extra'], /unexpected argument "extra"/],
        [['server', '--connect', 'x:1'], /Unknown option '--connect'/],
        [['server', '--data-dir', ''], /--data-dir must name a directory/],
      ];
      for (const [argv, message] of cases) {
        const run = await cli(argv);
        expect({ argv, code: run.code }).toEqual({ argv, code: ExitCode.USAGE });
        expect(run.stderr).toMatch(message);
        expect(run.stderr).toMatch(/^zk-recipes: [^\n]+\n$/);
      }
      const help = await cli(['server', '--help']);
      expect(help.code).toBe(ExitCode.OK);
      expect(help.stdout).toMatch(/^zk-recipes server \[--port 2181\] \[--ensemble N\] \[--data-dir DIR\]\n/);
      expect((await cli(['help', 'server'])).stdout).toBe(help.stdout);
    });
  });
});
