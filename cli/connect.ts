import { ZkClient } from '../src/client/ZkClient';
import { ConnectionTimeoutError, isZkError } from '../src/errors';
import { RetryNTimes } from '../src/retry';
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
  try {
    // Only the operator's Ctrl-C ends this wait early: when `timeoutMs` runs out, the client's
    // ConnectionTimeoutError carries why the last attempt failed, which a deadline would not.
    await client.blockUntilConnected({ timeoutMs, signal });
  } catch (err) {
    await client.close();
    if (err instanceof ConnectionTimeoutError) throw unreachable(connect, timeoutMs, err);
    if (err instanceof DOMException && err.name === 'TimeoutError') throw unreachable(connect, timeoutMs, undefined);
    throw err;
  }
  return client;
}

/** Exit 3, saying why: the host was not found, the connection was refused, or nothing answered. */
function unreachable(connect: string, timeoutMs: number, err: ConnectionTimeoutError | undefined): CliError {
  return new CliError(ExitCode.UNREACHABLE, `cannot reach ZooKeeper at ${connect} within ${timeoutMs} ms: ${connectFailure(err?.cause)}`);
}

/**
 * Why the last connection attempt failed, from the ConnectionTimeoutError's cause: the transport
 * wraps the socket's error (which has the errno code) in one that names the server.
 */
export function connectFailure(cause: unknown): string {
  // Read by shape: a socket's error may come from another realm (a test's VM context).
  const error = cause as { message?: unknown; code?: unknown; cause?: { code?: unknown } } | undefined;
  if (typeof error?.message !== 'string') return 'timed out (no server answered)';
  // An error that crossed realms may have been wrapped by its text, code lost: the text still names it.
  const message = error.message.replace(/^Error: /, '');
  const code = error.code ?? error.cause?.code ?? /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT)\b/.exec(message)?.[1];
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host not found (${message})`;
    case 'ECONNREFUSED':
      return `connection refused: no server listens there (${message})`;
    case 'ETIMEDOUT':
      return `timed out (${message})`;
    default:
      return message;
  }
}
