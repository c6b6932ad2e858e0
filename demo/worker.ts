/**
 * A demo worker: one process, one ZooKeeper session, driven by the demo over stdin and stdout.
 *
 *   node -r ts-node/register/transpile-only demo/worker.ts <name> <connectString> <sessionTimeoutMs>
 *
 * Commands come one JSON object per line on stdin (see protocol.ts); events go one per line on
 * stdout. It ends when told to (`close`, SIGTERM) and when stdin closes, which happens however the
 * demo ends, so no worker outlives it. Ctrl-C reaches the whole process group in a terminal: the
 * worker leaves it to the demo, which stops its workers itself.
 */
import { createInterface } from 'node:readline';
import { RetryNTimes, ZkClient } from '../src';
import { now, type Command, type WorkerEvent } from './protocol';
import { WorkerTasks } from './workerTasks';

const [name, connectString, sessionTimeoutMs] = process.argv.slice(2);

function emit(event: WorkerEvent): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

function fail(err: unknown): void {
  emit({ event: 'error', at: now(), message: err instanceof Error ? err.message : String(err) });
}

async function main(): Promise<void> {
  const client = new ZkClient({
    connectString,
    sessionTimeoutMs: Number(sessionTimeoutMs),
    connectionTimeoutMs: 15_000,
    retryPolicy: new RetryNTimes({ n: 20, sleepMsBetweenRetries: 250 }),
  });
  const tasks = new WorkerTasks(client, name, emit);
  let closing: Promise<void> | undefined;
  const close = (code: number) => {
    closing ??= (async () => {
      await tasks.close();
      await client.close();
      process.exit(code);
    })();
    return closing;
  };
  process.on('SIGINT', () => undefined);
  process.once('SIGTERM', () => void close(0));
  process.on('unhandledRejection', (err) => {
    fail(err);
    void close(1);
  });

  client.start();
  await client.blockUntilConnected({ timeoutMs: 30_000 });
  emit({ event: 'ready', session: `0x${client.sessionId.toString(16)}` });

  const lines = createInterface({ input: process.stdin });
  lines.on('close', () => void close(0));
  lines.on('line', (line) => {
    let cmd: Command;
    try {
      cmd = JSON.parse(line) as Command;
    } catch {
      return fail(new Error(`not a command: ${line}`));
    }
    const run = async (): Promise<void> => {
      switch (cmd.op) {
        case 'mutex':
          return tasks.mutex(cmd);
        case 'rw.acquire':
          return tasks.rwAcquire(cmd);
        case 'rw.release':
          return tasks.rwRelease();
        case 'latch':
          return tasks.latch(cmd);
        case 'produce':
          return tasks.produce(cmd);
        case 'consume':
          return tasks.consume(cmd);
        case 'stopConsuming':
          return tasks.stopConsuming();
        case 'close':
          return close(0);
      }
    };
    run().catch(fail);
  });
}

main().catch((err: unknown) => {
  fail(err);
  process.exit(1);
});
