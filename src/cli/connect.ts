import { ZkClient } from '../client/ZkClient';
import { ConnectionTimeoutError, isZkError } from '../errors';
import { RetryNTimes } from '../retry';
import { CliError, ExitCode, usageError } from './errors';

/** The CLI's session: long enough to ride out a short disconnection in a live view; it owns no nodes. */
const SESSION_TIMEOUT_MS = 30_000;

/**
 * A started client connected to `connect`, within `timeoutMs`.
 *
 * @throws CliError: USAGE for a malformed connect string, UNREACHABLE when no connection comes in time.
 */
export async function openClient(connect: string, timeoutMs: number, signal?: AbortSignal): Promise<ZkClient> {
  let client: ZkClient;
  try {
    client = new ZkClient({
      connectString: connect,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      // Each read waits for a connection at most this long, then retries a few times; the
      // command's own signal bounds the whole.
      connectionTimeoutMs: timeoutMs,
      retryPolicy: new RetryNTimes({ n: 3, sleepMsBetweenRetries: 200 }),
    });
  } catch (err) {
    if (isZkError(err, 'INVALID_ARGUMENT')) throw usageError(`--connect: ${err.message.replace(/^connectString /, '')}`);
    throw err;
  }
  client.start();
  const unreachable = () => new CliError(ExitCode.UNREACHABLE, `cannot reach ZooKeeper at ${connect} within ${timeoutMs} ms`);
  try {
    await client.blockUntilConnected({ timeoutMs, signal });
  } catch (err) {
    await client.close();
    // The command's own deadline may end the wait a moment before `timeoutMs` does.
    if (err instanceof ConnectionTimeoutError || (err instanceof DOMException && err.name === 'TimeoutError')) throw unreachable();
    throw err;
  }
  return client;
}
