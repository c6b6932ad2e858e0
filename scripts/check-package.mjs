// The consumer check: packs the package as npm would publish it, installs the tarball into a fresh
// project outside the repository with npm's default options, and proves that the install neither
// fetched nor built the optional native binding and that nothing loads it. Then it uses the package
// there as a user would: from CommonJS, from an ES module, and from TypeScript under
// moduleResolution node (node10), node16 and bundler, each importing zk-recipes and
// zk-recipes/testing and taking a mutex on a TestingServer; runs the operator CLI through its bin
// link; and runs a lock, a leader and a queue program on Bun and on Deno.
//
//   node scripts/check-package.mjs [--skip-build] [--keep] [--skip-runtimes]
//
// --skip-build packs the current dist/ (npm run build first); --keep leaves the temporary
// directory for a look; --skip-runtimes leaves Bun and Deno out. Bun and Deno come from npm (the
// packages `bun` and `deno`, whose platform packages carry the binary), installed once into
// node_modules/.cache/zk-recipes-runtimes with install scripts off: their scripts would only link
// the binary, or fetch one from elsewhere. Exits 1, with the failing step's output, when any step
// fails.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
const args = new Set(process.argv.slice(2));
const STEP_TIMEOUT_MS = 180_000;
const startedAt = Date.now();
const work = mkdtempSync(join(tmpdir(), 'zk-recipes-consumer-'));

function run(what, command, commandArgs, cwd, env = {}) {
  const t0 = Date.now();
  const result = spawnSync(command, commandArgs, { cwd, encoding: 'utf8', timeout: STEP_TIMEOUT_MS, env: { ...process.env, npm_config_loglevel: 'error', ...env } });
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

const TS_PROGRAM = (label) => `import { InterProcessMutex, ZkClient, LockTimeoutError, type Lease, type PersistentWatcher, type Session } from 'zk-recipes';
import { TestingServer, type TestingServerOptions } from 'zk-recipes/testing';
import { sortLockNodes } from 'zk-recipes/internals';

const options: TestingServerOptions = { forceSync: false };
void options;
void sortLockNodes;
// What only the client and the recipes call is not in the published declarations.
function internalsStayOut(client: ZkClient, session: Session, watcher: PersistentWatcher): void {
  // @ts-expect-error only the client ends a session
  session.end(new Error('ended by a user'));
  // @ts-expect-error only the client passes a watcher its events
  watcher.deliver({ type: 'reset', path: '/', reason: 'reconnected' });
  // @ts-expect-error the recipes' seam
  void client.createAndListParent('/node');
  // @ts-expect-error a test seam
  void client.pendingBackgroundDeletes;
  // @ts-expect-error a test seam
  void new ZkClient({ connectString: '127.0.0.1:2181', transportFactory: () => undefined });
}
void internalsStayOut;
async function main(): Promise<void> {${mutexProgram({ label, ts: true })}
}
main().catch((err: unknown) => {
  console.error(err instanceof LockTimeoutError ? 'timed out' : err);
  process.exitCode = 1;
});
`;

/** Run in the consumer project: the package loads and runs without the binding, and choosing it names the install command. */
const NATIVE_CHECK = `
const assert = require('node:assert');
const { ZkClient, UnsupportedError } = require('zk-recipes');
require('zk-recipes/testing');
new ZkClient({ connectString: '127.0.0.1:2181' });
const loaded = Object.keys(require.cache).filter((file) => /node_modules[\\\\/]zookeeper[\\\\/]/.test(file));
assert.deepStrictEqual(loaded, [], 'the zookeeper binding was loaded: ' + loaded.join(', '));
assert.throws(
  () => new ZkClient({ connectString: '127.0.0.1:2181', transport: 'native' }),
  (err) => err instanceof UnsupportedError && /not installed: install it with \`npm install zookeeper\`/.test(err.message),
);
`;

/** Names the runtime a program runs on, so that a run proves where it ran. */
const RUNTIME = `const runtime = typeof Bun !== 'undefined' ? 'Bun ' + Bun.version : typeof Deno !== 'undefined' ? 'Deno ' + Deno.version.deno : 'Node ' + process.version;`;

/** The first programs, as a user on another runtime would write them: each connects to ZK and ends on its own. */
const RUNTIME_PROGRAMS = {
  'lock.mjs': `import { InterProcessMutex, ZkClient } from 'zk-recipes';
${RUNTIME}
const client = new ZkClient({ connectString: process.env.ZK, sessionTimeoutMs: 10_000 });
client.start();
try {
  await client.blockUntilConnected({ timeoutMs: 20_000 });
  const lease = await new InterProcessMutex(client, '/runtimes/lock').acquire({ timeoutMs: 10_000 });
  const token = lease.fencingToken;
  await lease.release();
  console.log(runtime + ': lock held, fencing token ' + token);
} finally {
  await client.close();
}
`,
  'leader.mjs': `import { LeaderLatch, ZkClient } from 'zk-recipes';
${RUNTIME}
const client = new ZkClient({ connectString: process.env.ZK, sessionTimeoutMs: 10_000 });
const latch = new LeaderLatch(client, '/runtimes/leader', { id: 'runtime-check' });
client.start();
try {
  await client.blockUntilConnected({ timeoutMs: 20_000 });
  latch.start();
  await latch.await({ timeoutMs: 20_000 });
  console.log(runtime + ': leading as ' + (await latch.getLeader()).id);
} finally {
  await latch.close();
  await client.close();
}
`,
  'queue.mjs': `import { DistributedQueue, ZkClient } from 'zk-recipes';
${RUNTIME}
const client = new ZkClient({ connectString: process.env.ZK, sessionTimeoutMs: 10_000 });
client.start();
const queue = new DistributedQueue(client, '/runtimes/queue-' + runtime.split(' ')[0], { lockPath: '/runtimes/queue-locks-' + runtime.split(' ')[0] });
const stop = new AbortController();
try {
  await client.blockUntilConnected({ timeoutMs: 20_000 });
  await queue.put({ to: 'ada@example.com' });
  for await (const item of queue.consume({ signal: AbortSignal.any([stop.signal, AbortSignal.timeout(20_000)]) })) {
    console.log(runtime + ': took an item for ' + item.to);
    stop.abort();
  }
} catch (err) {
  if (!stop.signal.aborted) throw err;
} finally {
  await queue.close();
  await client.close();
}
`,
};

/** The packages \`bun\` and \`deno\` from npm, installed once; returns each runtime's executable. */
function installRuntimes() {
  const cache = join(repo, 'node_modules', '.cache', 'zk-recipes-runtimes');
  const wanted = { bun: '1', deno: '2' };
  const find = () => {
    const found = {};
    const oven = join(cache, 'node_modules', '@oven');
    for (const dir of existsSync(oven) ? readdirSync(oven) : []) if (existsSync(join(oven, dir, 'bin', 'bun'))) found.bun ??= join(oven, dir, 'bin', 'bun');
    const denoScope = join(cache, 'node_modules', '@deno');
    for (const dir of existsSync(denoScope) ? readdirSync(denoScope) : []) if (existsSync(join(denoScope, dir, 'deno'))) found.deno ??= join(denoScope, dir, 'deno');
    return found;
  };
  let found = find();
  if (!found.bun || !found.deno) {
    write(cache, { 'package.json': JSON.stringify({ private: true }) });
    // Install scripts off: npm picks the platform's package by its os, cpu and libc fields, and
    // that package holds the binary; the scripts would only link it (or download one).
    run(
      'install Bun and Deno from npm (once, into node_modules/.cache)',
      'npm',
      ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--no-save', ...Object.entries(wanted).map(([name, major]) => `${name}@${major}`)],
      cache,
    );
    found = find();
  }
  for (const name of Object.keys(wanted)) if (!found[name]) throw new Error(`npm installed no ${name} binary for ${process.platform}-${process.arch}`);
  return found;
}

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
    // No `types`, as TypeScript 6 and later default to: the package's own reference brings in Node's.
    'tsconfig.json': JSON.stringify({ compilerOptions: { ...TS_OPTIONS, types: [], module: 'node16', moduleResolution: 'node16' } }),
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
  // npm sets the bin's execute bit only when it installs the package; the build must set it for a clone.
  const main = join(repo, 'dist', 'cli', 'main.js');
  if ((statSync(main).mode & 0o111) === 0) throw new Error('the build left dist/cli/main.js without its execute bit');
  run('the built CLI runs as an executable in the clone', main, ['--version'], repo);
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
    'npm install the tarball (npm\'s default options)',
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, `@types/node@${typesNode}`],
    consumer,
  );

  // The binding is an optional peer dependency: the default install neither fetches nor builds it.
  const installed = readdirSync(join(consumer, 'node_modules'));
  if (installed.includes('zookeeper')) throw new Error('the default install fetched the zookeeper binding');
  const lock = JSON.parse(readFileSync(join(consumer, 'package-lock.json'), 'utf8'));
  const extra = Object.keys(lock.packages).filter((p) => /node_modules\/(zookeeper|node-gyp|prom-client)$/.test(p));
  if (extra.length > 0) throw new Error(`the default install holds ${extra.join(', ')}`);
  console.log(`  ${Object.keys(lock.packages).length - 1} packages installed, zookeeper not among them`);
  run('npm ls: no missing or unmet dependency, optional peers included', 'npm', ['ls', '--all'], consumer);
  run(
    'nothing loads the native binding; choosing it names `npm install zookeeper`',
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
  if (!args.has('--skip-runtimes')) {
    const runtimes = installRuntimes();
    const dir = join(consumer, 'runtimes');
    write(dir, { 'package.json': JSON.stringify({ private: true, type: 'module' }), ...RUNTIME_PROGRAMS });
    // One server for every run, from the installed package's own harness.
    const { TestingServer } = createRequire(join(consumer, 'package.json'))('zk-recipes/testing');
    const server = await TestingServer.start({ forceSync: false });
    try {
      const env = { ZK: server.connectString };
      for (const [name, executable] of Object.entries(runtimes)) {
        const version = run(`${name} --version`, executable, ['--version'], dir);
        // Deno runs Node programs from node_modules with every permission granted (-A).
        const command = name === 'deno' ? ['run', '-A'] : [];
        for (const program of Object.keys(RUNTIME_PROGRAMS)) {
          const out = run(`${name} ${program}`, executable, [...command, program], dir, env);
          if (!out.toLowerCase().startsWith(name)) throw new Error(`${name} ${program} printed:\n${out}`);
          console.log(`  ${out}`);
        }
        console.log(`  (${version.split('\n')[0]})`);
      }
    } finally {
      await server.close();
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
