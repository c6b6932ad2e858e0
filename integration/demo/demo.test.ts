import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { eventually, timing } from '../helpers';

const RUN = join(__dirname, '..', '..', 'demo', 'run.ts');

/** The demo as a process of its own, with its output collected. */
function startDemo(args: readonly string[], env: NodeJS.ProcessEnv = process.env): { child: ChildProcess; output: () => string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const child = spawn(process.execPath, ['-r', require.resolve('ts-node/register/transpile-only'), RUN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  return { child, output: () => output, exited };
}

/** Every live process under `pid`, with its command line. */
function descendantsOf(pid: number): Map<number, string> {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command may hold spaces and parentheses: the fields after the last ')' are fixed.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(entry), Number(fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found = new Map<number, string>();
  const visit = (parent: number) => {
    for (const [child, ppid] of parents) {
      if (ppid !== parent || found.has(child)) continue;
      let cmd = '';
      try {
        cmd = readFileSync(`/proc/${child}/cmdline`, 'utf8').replace(/\0/g, ' ');
      } catch {
        // gone meanwhile
      }
      found.set(child, cmd);
      visit(child);
    }
  };
  visit(pid);
  return found;
}

/** Whether `pid` is a process that still runs (a zombie no longer does). */
function isAlive(pid: number): boolean {
  if (!existsSync(`/proc/${pid}`)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('npm run demo', () => {
  it('Ctrl-C (SIGINT) part way leaves no worker, no server and no other process behind', async () => {
    const demo = startDemo(['--quick']);
    try {
      // Part way: the workers and the server run, and the first scene is under way.
      await eventually('the first grant of the FIFO scene', () => /w\d +granted, fencing token/.test(demo.output()), timing(180_000), 100);
      const port = Number(/ZooKeeper \(\w+\) on 127\.0\.0\.1:(\d+)/.exec(demo.output())?.[1]);
      const running = descendantsOf(demo.child.pid as number);
      const commands = [...running.values()];
      expect(commands.filter((c) => c.includes('demo/worker.ts'))).toHaveLength(7);
      expect(commands.some((c) => c.includes('QuorumPeerMain'))).toBe(true);
      expect(await listening(port)).toBe(true);

      demo.child.kill('SIGINT');
      expect(await demo.exited).toEqual({ code: 130, signal: null });
      expect(demo.output()).toContain('SIGINT: stopping the workers and the server…');
      expect(demo.output()).toContain('stopped; nothing is left running.');
      await eventually('every process the demo started to be gone', () => [...running.keys()].every((pid) => !isAlive(pid)), timing(5_000));
      expect(await listening(port)).toBe(false);
    } finally {
      demo.child.kill('SIGKILL');
    }
  });

  it('says in one line that ZooKeeper is missing, and how to install it', async () => {
    const demo = startDemo(['--quick'], { ...process.env, ZOOKEEPER_HOME: '/nonexistent/zookeeper', ZOOKEEPER_CLASSPATH: '' });
    expect(await demo.exited).toEqual({ code: 1, signal: null });
    const lines = demo.output().trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^demo: ZOOKEEPER_HOME=\/nonexistent\/zookeeper holds no zookeeper-<version>\.jar\. Install it with `apt-get update && apt-get install -y zookeeper`/);
    expect(demo.output()).not.toContain('starting 7 worker processes');
  });

  it('says in one line that Java is missing, and how to install it', async () => {
    const demo = startDemo(['--quick'], { ...process.env, PATH: '/nonexistent', JAVA_HOME: '', ZOOKEEPER_HOME: '', ZOOKEEPER_CLASSPATH: '/usr/share/java/zookeeper.jar' });
    expect(await demo.exited).toEqual({ code: 1, signal: null });
    expect(demo.output().trimEnd().split('\n').at(-1)).toMatch(/^demo: Java was not found .*Install it with `apt-get update && apt-get install -y default-jre-headless`\.$/);
  });

  it('refuses an unknown flag with the usage', async () => {
    const demo = startDemo(['--fast']);
    expect(await demo.exited).toEqual({ code: 2, signal: null });
    expect(demo.output()).toMatch(/^demo: Unknown option '--fast'/);
    expect(demo.output()).toContain('npm run demo [-- --quick]');
  });
});
