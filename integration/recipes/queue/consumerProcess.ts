/**
 * A lock-safe DistributedQueue consumer in a process of its own, for the kill test: it prints one
 * JSON line when it is ready and one per item it is given, and never finishes an item, so the
 * item is in hand when the test SIGKILLs it.
 *
 * Usage: node -r ts-node/register/transpile-only consumerProcess.ts <connectString> <path> <lockPath> <sessionTimeoutMs>
 */
import { DistributedQueue } from '../../../recipes/queue';
import { ZkClient } from '../../../src';
import { TEST_TRANSPORT } from '../../helpers';

async function main(): Promise<void> {
  const [connectString, path, lockPath, sessionTimeoutMs] = process.argv.slice(2);
  const client = new ZkClient({ connectString, sessionTimeoutMs: Number(sessionTimeoutMs), transport: TEST_TRANSPORT });
  client.start();
  await client.blockUntilConnected({ timeoutMs: 30_000 });
  const queue = new DistributedQueue<string>(client, path, { lockPath });
  queue.start(async (item) => {
    process.stdout.write(`${JSON.stringify({ item, session: client.sessionId.toString(16) })}\n`);
    await new Promise(() => undefined);
  });
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
