import { spawn } from 'node:child_process';
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
