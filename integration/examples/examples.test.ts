import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { timing } from '../helpers';

const root = join(__dirname, '..', '..');
const EXAMPLES = ['mutex', 'leader', 'read-write-lock', 'queue'];

/** Runs `npm run example -- <args>` as a user would, within `timeoutMs`. */
function runExample(args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'example', '--', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`npm run example -- ${args.join(' ')} did not end within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('the examples', () => {
  it('are the four the README names, and import the package by its name, as users do', () => {
    const files = readdirSync(join(root, 'examples')).filter((f) => f.endsWith('.ts'));
    expect(files.map((f) => f.slice(0, -3)).sort()).toEqual([...EXAMPLES].sort());
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    for (const file of files) {
      const source = readFileSync(join(root, 'examples', file), 'utf8');
      expect(source).toMatch(/from 'zk-recipes'/);
      expect(source).not.toMatch(/from '\.\.?\//);
      expect(readme).toContain(`npm run example -- ${file.slice(0, -3)}`);
    }
  });

  it.each(EXAMPLES)('npm run example -- %s runs to its end and reports ok', async (name) => {
    const { code, output } = await runExample([name], timing(90_000));
    expect({ code, last: output.trim().split('\n').pop() }).toEqual({ code: 0, last: expect.stringMatching(/\bok: /) });
  });

  it('names the examples when asked for one that does not exist', async () => {
    const { code, output } = await runExample(['no-such-example'], timing(30_000));
    expect(code).toBe(2);
    for (const name of EXAMPLES) expect(output).toContain(`npm run example -- ${name}`);
  });
});

/**
 * Each example, signalled as a user's Ctrl-C or a service manager's SIGTERM would: while its server
 * starts and its clients connect, and in the middle of its run (workers waiting and holding). It
 * ends cleanly: exit 0, no stack, its server stopped.
 */
describe('the examples, signalled', () => {
  /** Runs an example as `npm run example` does, in one process we can signal. */
  function start(name: string): { child: ChildProcess; output: () => string; waitFor: (pattern: RegExp) => Promise<void>; exit: Promise<number | null> } {
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', '-r', './scripts/example-paths.js', 'scripts/example.js', name], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const seen: Array<() => void> = [];
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      for (const check of [...seen]) check();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const waitFor = (pattern: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${pattern} within the bound:\n${output}`)), timing(240_000));
        const check = () => {
          if (!pattern.test(output)) return;
          clearTimeout(timer);
          seen.splice(seen.indexOf(check), 1);
          resolve();
        };
        seen.push(check);
        check();
      });
    return { child, output: () => output, waitFor, exit };
  }

  async function endsCleanly(run: ReturnType<typeof start>, finished: RegExp): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      run.exit,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          run.child.kill('SIGKILL');
          reject(new Error(`did not end within the bound after the signal:\n${run.output()}`));
        }, timing(30_000));
      }),
    ]).finally(() => clearTimeout(timer));
    expect(code).toBe(0);
    expect(run.output()).not.toMatch(/Error|\n\s+at /);
    expect(run.output().trim().split('\n').pop()).toMatch(finished);
  }

  it.each(EXAMPLES.flatMap((name) => [[name, 'SIGINT'] as const, [name, 'SIGTERM'] as const]))(
    '%s, signalled (%s) while its server starts and its clients connect, stops cleanly',
    async (name, signal) => {
      const run = start(name);
      await run.waitFor(/^starting a ZooKeeper server$/m);
      run.child.kill(signal);
      await endsCleanly(run, /^stopped$/);
    },
  );

  it.each([
    ['mutex', /holds the lock/],
    ['leader', /^candidate-\d leads$/m],
    ['read-write-lock', /reader-1 and reader-2 read at the same time/],
    ['read-write-lock', /writer asked, and waits for the readers/],
    ['queue', /consumer-\d|producer-\w put/],
  ] as const)('%s, signalled while its workers wait and hold, stops cleanly', async (name, moment) => {
    const run = start(name);
    await run.waitFor(moment);
    run.child.kill('SIGINT');
    // The run may finish its last steps before the signal lands: either way, cleanly.
    await endsCleanly(run, /^(stopped|ok: .*)$/);
  }, timing(300_000));
});
