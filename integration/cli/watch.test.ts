import { InterProcessMutex } from '../../recipes/locks';
import { ExitCode } from '../../cli/errors';
import type { LocksReport } from '../../cli/locks';
import type { QueueReport } from '../../cli/queue';
import type { ZkClient } from '../../src';
import { TestingServer, freePorts } from '../../src/testing';
import { childrenOf, eventually, randomRoot, timing } from '../helpers';
import { useZooKeeper } from '../fixture';
import { Lines, cli, spawnCli, type CliRun } from './cliTesting';

/** The JSON lines a watch printed that are reports (not notes or errors). */
function reportsOf<T>(lines: Lines): T[] {
  return lines.lines.map((l) => JSON.parse(l) as T & { error?: string; note?: string }).filter((r) => r.error === undefined && r.note === undefined);
}

/** The sessions that the server says watch `path` (wchp: a path, then one tab-indented session per line). */
async function watchersOf(server: TestingServer, path: string): Promise<string[]> {
  const lines = (await server.fourLetterWord('wchp')).split('\n');
  const at = lines.indexOf(path);
  if (at < 0) return [];
  const rest = lines.slice(at + 1);
  const end = rest.findIndex((line) => !line.startsWith('\t'));
  return rest.slice(0, end < 0 ? undefined : end).map((line) => line.trim());
}

/** Runs `zk-recipes <argv>` (a watch) in this process while `body` runs, then stops it as Ctrl-C would; resolves with its result. */
async function watchWhile(argv: readonly string[], body: (out: Lines) => Promise<void>, options: { tty?: boolean } = {}): Promise<CliRun> {
  const stop = new AbortController();
  const out = new Lines(options.tty);
  const watching = cli(argv, { stop: stop.signal, stdout: out });
  try {
    await body(out);
  } finally {
    stop.abort(new Error('SIGINT'));
  }
  return watching;
}

describe('zk-recipes watch: live views on ZooKeeper watches', () => {
  const zk = useZooKeeper({ closeClients: 'file' });
  let a: ZkClient;
  let b: ZkClient;
  let connect: string[];

  beforeAll(async () => {
    a = await zk.clients.connect({ connectString: zk.server.connectString });
    b = await zk.clients.connect({ connectString: zk.server.connectString });
    connect = ['--connect', zk.server.connectString];
  });

  it('--json: one line per change of a lock, through its node going away and coming back', async () => {
    const path = `${randomRoot('cli')}/mutex`;
    const held = await new InterProcessMutex(a, path, { data: 'a' }).acquire();
    const run = await watchWhile(['watch', 'locks', path, ...connect, '--json'], async (out) => {
      await out.waitFor((l) => l.includes('"holders"'));
      const [first] = reportsOf<LocksReport>(out);
      expect(first).toMatchObject({ command: 'locks', path, recipe: 'mutex', waiting: [] });
      expect(first.holders.map((h) => h.data?.value)).toEqual(['a']);

      // The view's session watches what it read; the server lists data watches (wchp), so look at the holder's node.
      const known = [a.sessionId, b.sessionId].map((id) => `0x${id.toString(16)}`);
      await eventually('a watch by the CLI on the holder', async () => (await watchersOf(zk.server, first.holders[0].path)).some((s) => !known.includes(s)));

      const waiting = new InterProcessMutex(b, path, { data: 'b' }).acquire({ timeoutMs: timing(20_000) });
      let mark = out.lines.length;
      await out.waitFor((l) => l.includes('"waiting":[{'), mark);
      mark = out.lines.length;
      await held.release();
      const second = await waiting;
      await out.waitFor((l) => (JSON.parse(l) as LocksReport).holders?.[0]?.data?.value === 'b', mark);

      // The last release leaves an empty container, which the server soon deletes: the view says so and waits.
      mark = out.lines.length;
      await second.release();
      const gone = await out.waitFor((l) => l.includes('"error"'), mark);
      expect(JSON.parse(gone)).toMatchObject({ command: 'locks', path, error: `${path} does not exist` });
      mark = out.lines.length;
      const again = await new InterProcessMutex(a, path, { data: 'again' }).acquire();
      await out.waitFor((l) => (JSON.parse(l) as LocksReport).holders?.[0]?.data?.value === 'again', mark);
      await again.release();

      // Each report differs from the one before: a refresh that finds the same state prints nothing.
      const states = out.lines.map((l) => l.replace(/"(at|ageMs)":("[^"]*"|\d+)/g, ''));
      for (let i = 1; i < states.length; i++) expect(states[i]).not.toBe(states[i - 1]);
    });
    expect(run).toMatchObject({ code: ExitCode.OK, stderr: '' });
  });

  it('text: each change printed after a time line; a queue drained and refilled', async () => {
    const path = `${randomRoot('cli')}/queue`;
    await a.create(`${path}/queue-`, { mode: 'PERSISTENT_SEQUENTIAL', createParents: 'persistent' });
    const run = await watchWhile(['watch', 'queue', path, ...connect], async (out) => {
      await out.waitFor((l) => l.startsWith(`${path}  DistributedQueue (fifo): depth 1`));
      expect(out.lines[0]).toMatch(/^--- \d{4}-\d\d-\d\dT/);
      let mark = out.lines.length;
      await a.create(`${path}/queue-`, { mode: 'PERSISTENT_SEQUENTIAL' });
      await out.waitFor((l) => l.startsWith(`${path}  DistributedQueue (fifo): depth 2`), mark);
      mark = out.lines.length;
      for (const child of await childrenOf(a, path)) await a.delete(`${path}/${child}`);
      await out.waitFor((l) => l === `${path}  no items: depth 0`, mark);
    });
    expect(run.code).toBe(ExitCode.OK);
  });

  it('a terminal: the screen is cleared and redrawn with a header', async () => {
    const path = `${randomRoot('cli')}/q`;
    await a.create(`${path}/queue-`, { mode: 'PERSISTENT_SEQUENTIAL', createParents: 'persistent' });
    const run = await watchWhile(
      ['watch', 'queue', path, ...connect],
      async (out) => {
        await out.waitFor((l) => l.includes('depth 1'));
        expect(out.text).toContain(`\x1b[H\x1b[2Jzk-recipes watch queue ${path}  (${zk.server.connectString}; Ctrl-C to stop)\n\n${path}  DistributedQueue (fifo): depth 1`);
      },
      { tty: true },
    );
    expect(run.code).toBe(ExitCode.OK);
  });

  it('a path that does not exist yet: shown as missing, then followed once it is created', async () => {
    // An idle lock's container (and its parent's) is reaped: `watch locks` on it must wait, not exit 4.
    const path = `${randomRoot('cli')}/ledger`;
    const run = await watchWhile(['watch', 'locks', path, ...connect, '--json'], async (out) => {
      const missing = await out.waitFor((l) => l.includes('"error"'));
      expect(JSON.parse(missing)).toMatchObject({ command: 'locks', path, error: `${path} does not exist` });
      const held = await new InterProcessMutex(a, path, { data: 'first' }).acquire();
      await out.waitFor((l) => (JSON.parse(l) as LocksReport).holders?.[0]?.data?.value === 'first');
      await held.release();
    });
    expect(run).toMatchObject({ code: ExitCode.OK, stderr: '' });
  });

  it('what stops a watch before it starts: no recipe, no ensemble', async () => {
    const root = randomRoot('cli');
    await a.create(`${root}/plain/x`, { createParents: 'persistent' });
    expect((await cli(['watch', 'queue', `${root}/plain`, ...connect])).code).toBe(ExitCode.NOT_A_RECIPE);
    const [port] = await freePorts(1);
    const run = await cli(['watch', 'tree', '/', '--connect', `127.0.0.1:${port}`, '--timeout-ms', '500']);
    expect(run).toMatchObject({ code: ExitCode.UNREACHABLE, stderr: `zk-recipes: cannot reach ZooKeeper at 127.0.0.1:${port} within 500 ms: connection refused: no server listens there (connect ECONNREFUSED 127.0.0.1:${port})\n` });
  });

  it('a shown lost connection, and a fresh view once the server is back', async () => {
    const path = `${randomRoot('cli')}/queue`;
    await a.create(`${path}/queue-`, { mode: 'PERSISTENT_SEQUENTIAL', createParents: 'persistent' });
    const run = await watchWhile(['watch', 'queue', path, ...connect, '--json'], async (out) => {
      await out.waitFor((l) => l.includes('"depth":1'));
      let mark = out.lines.length;
      await zk.server.stop();
      await out.waitFor((l) => l.includes('"note":"connection lost'), mark);
      await zk.server.start();
      await a.blockUntilConnected({ timeoutMs: timing(20_000) });
      mark = out.lines.length;
      await a.create(`${path}/queue-`, { mode: 'PERSISTENT_SEQUENTIAL' });
      // The watch's client may find the server still starting and wait out an attempt (a third of
      // its 30 s session) before it reads again.
      const report = JSON.parse(await out.waitFor((l) => l.includes('"depth":2'), mark, timing(60_000))) as QueueReport;
      expect(report).toMatchObject({ command: 'queue', depth: 2 });
    });
    expect(run.code).toBe(ExitCode.OK);
  });

  it('as a process: Ctrl-C (SIGINT) ends the watch with exit 0', async () => {
    const path = `${randomRoot('cli')}/queue`;
    await a.create(`${path}/queue-`, { mode: 'PERSISTENT_SEQUENTIAL', createParents: 'persistent' });
    const child = spawnCli(['watch', 'queue', path, ...connect]);
    const out = new Lines();
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => out.write(chunk));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
    await out.waitFor((l) => l.includes('depth 1'), 0, timing(60_000));
    const mark = out.lines.length;
    await a.create(`${path}/queue-`, { mode: 'PERSISTENT_SEQUENTIAL' });
    await out.waitFor((l) => l.includes('depth 2'), mark);
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), timing(10_000));
    expect(await exited).toEqual({ code: 0, signal: null });
    clearTimeout(timer);
    expect(stderr).toBe('');
  });
});
