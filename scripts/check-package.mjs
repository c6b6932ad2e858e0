// The consumer check: packs the package as npm would publish it, installs the tarball into a fresh
// project outside the repository, and uses it there as a user would, from CommonJS, from an ES
// module, and from TypeScript under moduleResolution node (node10), node16 and bundler, each
// importing zk-recipes and zk-recipes/testing and taking a mutex on a TestingServer; and runs the
// operator CLI through its bin link.
//
//   node scripts/check-package.mjs [--skip-build] [--keep]
//
// --skip-build packs the current dist/ (npm run build first); --keep leaves the temporary
// directory for a look. Exits 1, with the failing step's output, when any step fails.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
const args = new Set(process.argv.slice(2));
const STEP_TIMEOUT_MS = 180_000;
const startedAt = Date.now();
const work = mkdtempSync(join(tmpdir(), 'zk-recipes-consumer-'));

function run(what, command, commandArgs, cwd) {
  const t0 = Date.now();
  const result = spawnSync(command, commandArgs, { cwd, encoding: 'utf8', timeout: STEP_TIMEOUT_MS, env: { ...process.env, npm_config_loglevel: 'error' } });
  const ms = Date.now() - t0;
  if (result.status !== 0) {
    console.error(`✗ ${what} (${ms} ms): ${result.error?.message ?? `exit ${result.status ?? result.signal}`}`);
    console.error(`  $ ${command} ${commandArgs.join(' ')}   (in ${cwd})`);
    console.error(`${result.stdout ?? ''}${result.stderr ?? ''}`.trim().replace(/^/gm, '  '));
    throw new Error(`${what} failed`);
  }
  console.log(`✓ ${what} (${ms} ms)`);
  return result.stdout.trim();
}

function write(dir, files) {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
}

/** The program every project runs: a TestingServer, a client, a mutex held and released. */
function mutexProgram({ label, ts }) {
  const t = (annotation) => (ts ? annotation : '');
  return `
  const server${t(': TestingServer')} = await TestingServer.start({ forceSync: false });
  try {
    const client = new ZkClient({ connectString: server.connectString, sessionTimeoutMs: 10_000 });
    client.start();
    await client.blockUntilConnected({ timeoutMs: 20_000 });
    const mutex = new InterProcessMutex(client, '/consumer/lock');
    const lease${t(': Lease')} = await mutex.acquire({ timeoutMs: 10_000 });
    const token${t(': bigint')} = lease.fencingToken;
    await lease.release();
    await client.close();
    console.log('${label}: held /consumer/lock with fencing token ' + token);
  } finally {
    await server.close();
  }`;
}

const TS_PROGRAM = (label) => `import { InterProcessMutex, ZkClient, LockTimeoutError, type Lease } from 'zk-recipes';
import { TestingServer, type TestingServerOptions } from 'zk-recipes/testing';
import { sortLockNodes } from 'zk-recipes/internals';

const options: TestingServerOptions = { forceSync: false };
void options;
void sortLockNodes;
async function main(): Promise<void> {${mutexProgram({ label, ts: true })}
}
main().catch((err: unknown) => {
  console.error(err instanceof LockTimeoutError ? 'timed out' : err);
  process.exitCode = 1;
});
`;

/** Run in the consumer project: the package loads and runs without the binding, and refuses it helpfully. */
const NATIVE_CHECK = `
const assert = require('node:assert');
const { ZkClient, UnsupportedError } = require('zk-recipes');
require('zk-recipes/testing');
new ZkClient({ connectString: '127.0.0.1:2181' });
const loaded = Object.keys(require.cache).filter((file) => /node_modules[\\\\/]zookeeper[\\\\/]/.test(file));
assert.deepStrictEqual(loaded, [], 'the zookeeper binding was loaded: ' + loaded.join(', '));
assert.throws(
  () => new ZkClient({ connectString: '127.0.0.1:2181', transport: 'native' }),
  (err) => err instanceof UnsupportedError && /npm rebuild zookeeper/.test(err.message),
);
`;

const TS_OPTIONS = { target: 'ES2022', strict: true, skipLibCheck: false, types: ['node'], outDir: 'out', rootDir: '.' };

const PROJECTS = {
  cjs: {
    'package.json': JSON.stringify({ private: true, type: 'commonjs' }),
    'index.js': `const { InterProcessMutex, ZkClient } = require('zk-recipes');
const { TestingServer } = require('zk-recipes/testing');
async function main() {${mutexProgram({ label: 'CommonJS' })}
}
main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
`,
  },
  esm: {
    'package.json': JSON.stringify({ private: true, type: 'module' }),
    'index.js': `import { createRequire } from 'node:module';
import { InterProcessMutex, LockTimeoutError, ZkClient } from 'zk-recipes';
import { TestingServer } from 'zk-recipes/testing';
import { sortLockNodes } from 'zk-recipes/internals';

// One implementation behind both entries: the classes are the same objects.
const required = createRequire(import.meta.url)('zk-recipes');
if (required.LockTimeoutError !== LockTimeoutError || required.ZkClient !== ZkClient) throw new Error('import and require give different classes');
if (typeof sortLockNodes !== 'function') throw new Error('zk-recipes/internals is missing sortLockNodes');
${mutexProgram({ label: 'ES module' })}
`,
  },
  'ts-node10': {
    'package.json': JSON.stringify({ private: true, type: 'commonjs' }),
    'tsconfig.json': JSON.stringify({ compilerOptions: { ...TS_OPTIONS, module: 'commonjs', moduleResolution: 'node' } }),
    'index.ts': TS_PROGRAM('TypeScript, moduleResolution node'),
  },
  'ts-node16': {
    'package.json': JSON.stringify({ private: true, type: 'module' }),
    'tsconfig.json': JSON.stringify({ compilerOptions: { ...TS_OPTIONS, module: 'node16', moduleResolution: 'node16' } }),
    'index.ts': TS_PROGRAM('TypeScript, moduleResolution node16'),
  },
  'ts-bundler': {
    'package.json': JSON.stringify({ private: true, type: 'module' }),
    'tsconfig.json': JSON.stringify({ compilerOptions: { ...TS_OPTIONS, module: 'esnext', moduleResolution: 'bundler' } }),
    'index.ts': TS_PROGRAM('TypeScript, moduleResolution bundler'),
  },
};

try {
  const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
  if (!args.has('--skip-build')) run('build', 'npm', ['run', '--silent', 'build'], repo);
  const packed = JSON.parse(run('npm pack', 'npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], repo));
  const tarball = join(work, packed[0].filename);
  const files = packed[0].files.map((f) => f.path);
  const unwanted = files.filter((f) => /\.map$|FakeTransport|jestSetup|\.test\./.test(f));
  if (unwanted.length > 0) throw new Error(`the tarball ships files it should not: ${unwanted.join(', ')}`);
  for (const needed of ['LICENSE', 'README.md', 'dist/index.mjs', 'dist/index.d.mts', 'dist/testing.d.ts', 'dist/internals.js']) {
    if (!files.includes(needed)) throw new Error(`the tarball lacks ${needed}`);
  }
  console.log(`  ${packed[0].filename}: ${files.length} files, ${packed[0].size} bytes`);

  // One install, shared by the projects below it (Node and TypeScript look for node_modules upwards).
  const consumer = join(work, 'consumer');
  write(consumer, { 'package.json': JSON.stringify({ name: 'consumer', private: true }) });
  const typesNode = pkg.devDependencies['@types/node'];
  run(
    'npm install the tarball (install scripts off: no compiler)',
    'npm',
    ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', tarball, `@types/node@${typesNode}`],
    consumer,
  );

  // Install scripts were off, so the optional native binding is there but unbuilt: nothing may
  // load it, and choosing the native transport must say how to build it.
  run(
    'nothing loads the native binding; choosing it unbuilt says how to build it',
    'node',
    ['-e', NATIVE_CHECK],
    consumer,
  );

  const usage = run('the CLI through its bin link: zk-recipes --help', join(consumer, 'node_modules', '.bin', 'zk-recipes'), ['--help'], consumer);
  if (!usage.startsWith('Usage: zk-recipes')) throw new Error(`zk-recipes --help printed:\n${usage}`);

  const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  for (const [name, projectFiles] of Object.entries(PROJECTS)) {
    const dir = join(consumer, name);
    write(dir, projectFiles);
    if ('tsconfig.json' in projectFiles) {
      run(`${name}: type check and compile`, 'node', [tsc, '-p', dir], dir);
      console.log(`  ${run(`${name}: run`, 'node', [join(dir, 'out', 'index.js')], dir)}`);
    } else {
      console.log(`  ${run(`${name}: run`, 'node', [join(dir, 'index.js')], dir)}`);
    }
  }
  console.log(`package check passed in ${Math.round((Date.now() - startedAt) / 1000)} s`);
} catch (err) {
  console.error(`package check failed: ${err.message}`);
  process.exitCode = 1;
} finally {
  if (args.has('--keep')) console.log(`left in ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
