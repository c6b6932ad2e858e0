/**
 * The writer of the `cache` scenario, in a process of its own so that it takes no time from the
 * library under test (zk-recipes runs in the bench's own process). One zk-recipes client, the same
 * for every library. Protocol as the drivers' (bench/peers/remote.ts): `open {connect}`,
 * `write {root, nodes, data}` (sets the data of every node of the tree, WRITE_WINDOW at a time;
 * replies with elapsedMs), `exit`. It exits when its stdin closes.
 */
import { createInterface } from 'node:readline';
import { ZkClient } from '../../src';
import { treePaths, windowed } from './cacheTree';

let client: ZkClient | undefined;

function emit(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

async function handle(cmd: string, a: Record<string, unknown>): Promise<Record<string, unknown>> {
  switch (cmd) {
    case 'open': {
      await client?.close();
      client = new ZkClient({ connectString: String(a.connect), sessionTimeoutMs: 30_000 });
      client.start();
      await client.blockUntilConnected({ timeoutMs: 30_000 });
      return {};
    }
    case 'write': {
      const writer = client;
      if (!writer) throw new Error('not open');
      const data = String(a.data);
      const t0 = performance.now();
      await windowed(treePaths(String(a.root), Number(a.nodes)), (p) => writer.setData(p, data));
      return { elapsedMs: performance.now() - t0 };
    }
    default:
      throw new Error(`unknown command ${cmd}`);
  }
}

async function main(): Promise<void> {
  emit({ event: 'ready', versions: {} });
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() === '') continue;
    const request = JSON.parse(line) as Record<string, unknown>;
    if (request.cmd === 'exit') {
      emit({ id: request.id, ok: true });
      break;
    }
    try {
      emit({ id: request.id, ok: true, ...(await handle(String(request.cmd), request)) });
    } catch (err) {
      emit({ id: request.id, ok: false, error: String(err) });
    }
  }
  await client?.close();
  process.exit(0);
}

void main();
