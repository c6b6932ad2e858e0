import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { InterProcessMutex } from '../../recipes/locks';
import { FaultProxy, TestingServer } from '../../src/testing';
import { Clients, childrenOf, eventually, timing } from '../helpers';

/**
 * The README's first programs, run as a reader would run them: saved as .mjs files and started
 * with node. Inside the repository, 'zk-recipes' resolves to the package itself (self-reference
 * through its exports), that is to the build in dist/, as it would from node_modules.
 */
const root = join(__dirname, '..', '..');
const dir = join(root, '.readme-programs');

function firstPrograms(): Map<string, string> {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const programs = new Map<string, string>();
  for (const match of readme.matchAll(/<!-- first-program: ([\w-]+) -->\n```js\n([\s\S]*?)```/g)) programs.set(match[1], match[2]);
  return programs;
}

/** Builds dist/ when a source is newer than it, so the programs run what the sources say. */
function ensureFreshBuild(): void {
  const newest = (path: string): number => {
    const stat = statSync(path);
    if (!stat.isDirectory()) return path.endsWith('.ts') ? stat.mtimeMs : 0;
    return Math.max(0, ...readdirSync(path).map((entry) => newest(join(path, entry))));
  };
  let built = 0;
  try {
    built = statSync(join(root, 'dist', 'index.mjs')).mtimeMs;
  } catch {
    // not built yet
  }
  const sources = Math.max(...['index.ts', 'testing.ts', 'internals.ts', 'src', 'recipes'].map((p) => newest(join(root, p))));
  if (built > sources) return;
  const result = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, encoding: 'utf8', timeout: timing(180_000) });
  if (result.status !== 0) throw new Error(`npm run build failed:\n${result.stdout}${result.stderr}`);
}

/** A program's process, with its output so far, and a wait for a line of it. */
class Program {
  readonly child: ChildProcess;
  output = '';
  private readonly exited: Promise<number | null>;

  constructor(file: string, connectString: string) {
    this.child = spawn(process.execPath, [file], { cwd: dir, env: { ...process.env, ZK: connectString }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  /** Resolves once the output matches `pattern`; rejects when the program exits first, or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs = timing(30_000)): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (pattern.test(this.output)) done(resolve);
        else if (this.child.exitCode !== null) done(() => reject(new Error(`the program exited (${this.child.exitCode}) before printing ${pattern}:\n${this.output}`)));
      };
      const timer = setTimeout(() => done(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${this.output}`))), timeoutMs);
      const done = (settle: () => void) => {
        clearTimeout(timer);
        this.child.stdout?.off('data', later);
        this.child.off('exit', later);
        settle();
      };
      // After this chunk's own listener has added it to the output.
      const later = () => setImmediate(check);
      this.child.stdout?.on('data', later);
      this.child.on('exit', later);
      check();
    });
  }

  async exitCode(timeoutMs = timing(30_000)): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        reject(new Error(`the program did not exit within ${timeoutMs} ms:\n${this.output}`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

describe("the README's first programs", () => {
  let server: TestingServer;
  const clients = new Clients();
  const programs = firstPrograms();

  beforeAll(async () => {
    ensureFreshBuild();
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const [name, source] of programs) writeFileSync(join(dir, `${name}.mjs`), source);
    server = await TestingServer.start({ forceSync: false });
  });
  afterEach(() => clients.closeAll());
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are a lock, a leader, a queue and a service registry, each about 20 lines', () => {
    expect([...programs.keys()]).toEqual(['lock', 'leader', 'queue', 'discovery']);
    for (const source of programs.values()) expect(source.trim().split('\n').length).toBeLessThanOrEqual(30);
  });

  it('the lock takes the lock, prints its fencing token and exits', async () => {
    const program = new Program(join(dir, 'lock.mjs'), server.connectString);
    expect(await program.exitCode()).toBe(0);
    expect(program.output).toMatch(/^holding \/locks\/invoices, fencing token \d+$/m);
  });

  it('the leader leads, and on SIGTERM leaves at once, its node gone', async () => {
    const program = new Program(join(dir, 'leader.mjs'), server.connectString);
    await program.waitFor(/^leading: start the scheduled work$/m);
    const observer = await clients.connect({ connectString: server.connectString });
    expect(await childrenOf(observer, '/services/reports/leader')).toHaveLength(1);
    program.child.kill('SIGTERM');
    expect(await program.exitCode()).toBe(0);
    expect(await childrenOf(observer, '/services/reports/leader')).toEqual([]);
  });

  it('the queue hands its item to its consumer, and on SIGTERM stops, the item deleted', async () => {
    const program = new Program(join(dir, 'queue.mjs'), server.connectString);
    await program.waitFor(/^sending "Welcome" to ada@example\.com$/m);
    program.child.kill('SIGTERM');
    expect(await program.exitCode()).toBe(0);
    const observer = await clients.connect({ connectString: server.connectString });
    expect(await childrenOf(observer, '/queues/emails')).toEqual([]);
  });

  it('the service registers, a provider picks it and the program calls it, and on exit it is unregistered', async () => {
    const program = new Program(join(dir, 'discovery.mjs'), server.connectString);
    expect(await program.exitCode()).toBe(0);
    expect(program.output).toMatch(/^called [0-9a-f-]{36}, version 1\.4\.2: hello from reports$/m);
    const observer = await clients.connect({ connectString: server.connectString });
    expect(await childrenOf(observer, '/services/reports')).toEqual([]);
  });

  it('a wrong host makes the lock program fail within its time limit, saying why', async () => {
    const program = new Program(join(dir, 'lock.mjs'), 'nosuchhost.invalid:2181');
    expect(await program.exitCode()).toBe(1);
    expect(program.output).toMatch(/ConnectionTimeoutError: no connection to nosuchhost\.invalid:2181 within \d+ ms; the last attempt failed: .*not ?found/i);
  });
});

/**
 * Ctrl-C or SIGTERM at any moment ends each first program cleanly (exit 0, no stack): while it
 * connects, while it waits, while it holds. A waiter that leaves its node behind keeps everyone
 * behind it waiting for its session to expire (60 s by default): the next waiter must get the
 * lock within moments instead.
 */
describe("the README's first programs, signalled", () => {
  let server: TestingServer;
  let proxy: FaultProxy;
  const clients = new Clients();
  const programs = firstPrograms();
  const LOCK = '/locks/invoices';
  /** Far below the programs' 60 s session timeout, generous for a loaded machine. */
  const PROMPT_MS = timing(10_000);

  beforeAll(async () => {
    ensureFreshBuild();
    mkdirSync(dir, { recursive: true });
    for (const [name, source] of programs) writeFileSync(join(dir, `signalled-${name}.mjs`), source);
    server = await TestingServer.start({ forceSync: false });
  });
  beforeEach(async () => {
    proxy = await FaultProxy.start(server.connectString);
  });
  afterEach(async () => {
    await clients.closeAll();
    await proxy.close();
  });
  afterAll(async () => {
    await server?.close();
    for (const name of programs.keys()) rmSync(join(dir, `signalled-${name}.mjs`), { force: true });
  });

  const start = (name: string, connectString = server.connectString) => new Program(join(dir, `signalled-${name}.mjs`), connectString);

  /** Exits 0 within PROMPT_MS, with nothing on stderr-like output that looks like a stack. */
  async function endsCleanly(program: Program): Promise<void> {
    expect(await program.exitCode(PROMPT_MS)).toBe(0);
    expect(program.output).not.toMatch(/Error|\n\s+at /);
  }

  it.each([
    ['lock', 'SIGINT'],
    ['leader', 'SIGINT'],
    ['queue', 'SIGTERM'],
  ] as const)('the %s program, signalled (%s) while it connects, ends cleanly', async (name, signal) => {
    // Connections are accepted and never answered: the program stays in blockUntilConnected.
    proxy.blackhole();
    const program = start(name, proxy.connectString);
    await eventually('the program to open its connection', () => proxy.connectionCount > 0);
    program.child.kill(signal);
    await endsCleanly(program);
  });

  it.each(['SIGINT', 'SIGTERM'] as const)('the lock program, signalled (%s) while it waits, leaves the line at once', async (signal) => {
    const holderClient = await clients.connect({ connectString: server.connectString });
    const holder = await new InterProcessMutex(holderClient, LOCK).acquire();
    const program = start('lock');
    await eventually('the program to queue', async () => (await childrenOf(holderClient, LOCK)).length === 2);
    // The next waiter queues behind the program.
    const nextClient = await clients.connect({ connectString: server.connectString });
    const next = new InterProcessMutex(nextClient, LOCK).acquire({ timeoutMs: timing(120_000) });
    await eventually('the next waiter to queue', async () => (await childrenOf(holderClient, LOCK)).length === 3);
    program.child.kill(signal);
    await endsCleanly(program);
    const released = performance.now();
    await holder.release();
    const lease = await next;
    expect(performance.now() - released).toBeLessThan(PROMPT_MS);
    await lease.release();
  });

  it.each(['SIGINT', 'SIGTERM'] as const)('the lock program, signalled (%s) while it holds, releases at once', async (signal) => {
    const program = start('lock');
    await program.waitFor(/^holding \/locks\/invoices/m);
    const nextClient = await clients.connect({ connectString: server.connectString });
    const next = new InterProcessMutex(nextClient, LOCK).acquire({ timeoutMs: timing(120_000) });
    await eventually('the next waiter to queue', async () => (await childrenOf(nextClient, LOCK)).length === 2);
    const signalled = performance.now();
    program.child.kill(signal);
    const lease = await next;
    expect(performance.now() - signalled).toBeLessThan(PROMPT_MS);
    await endsCleanly(program);
    await lease.release();
  });

  it('the leader program, signalled while it stands by, leaves the election at once', async () => {
    const leader = start('leader');
    await leader.waitFor(/^leading: start the scheduled work$/m);
    const standBy = start('leader');
    const observer = await clients.connect({ connectString: server.connectString });
    await eventually('the second candidate to join', async () => (await childrenOf(observer, '/services/reports/leader')).length === 2);
    standBy.child.kill('SIGINT');
    await endsCleanly(standBy);
    expect(await childrenOf(observer, '/services/reports/leader')).toHaveLength(1);
    leader.child.kill('SIGINT');
    await endsCleanly(leader);
    expect(await childrenOf(observer, '/services/reports/leader')).toEqual([]);
  });
});
