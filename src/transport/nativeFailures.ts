/**
 * Why the C client could not connect, told in words: it keeps the reason in errno and its own
 * log, so what we can say comes from what its init returned and from the states an attempt went
 * through.
 */

/** The C client's hint for every failure it does not tell us the reason of. */
export const NATIVE_LOG_HINT = 'ZK_RECIPES_NATIVE_LOG_LEVEL=1 shows the C client\'s own reason';

/** The hosts of a connect string, without ports or chroot. */
function hostsOf(connectString: string): string[] {
  return connectString
    .split('/')[0]
    .split(',')
    .map((hostPort) => hostPort.slice(0, hostPort.lastIndexOf(':')));
}

/**
 * Why the C client could not even begin: its init fails when no host of the connect string
 * resolves (it maps getaddrinfo's "no such name" to ENOENT, every other lookup failure to EINVAL).
 */
export function initFailure(err: { code?: string; message?: string }, connectString: string): Error {
  const hosts = hostsOf(connectString).join(', ');
  switch (err.code) {
    case 'ENOENT':
      return Object.assign(new Error(`host not found: ${hosts} (getaddrinfo ENOTFOUND)`), { code: 'ENOTFOUND', cause: err });
    case 'ENOMEM':
      return Object.assign(new Error(`out of memory resolving ${hosts}`), { code: 'ENOMEM', cause: err });
    default:
      return Object.assign(new Error(`could not resolve ${hosts}, or the connect string's chroot is not a valid path (${err.code ?? err.message ?? String(err)})`), {
        code: err.code,
        cause: err,
      });
  }
}

/** What the C client lets us see of a connection attempt: when we saw it begin, and whether a server took the TCP connection. */
export interface Attempt {
  readonly startedAt: number;
  reachedServer: boolean;
}

/**
 * Why an attempt failed, as far as its states tell: the C client keeps the reason in errno and its
 * own log. It gives an attempt two thirds of the session timeout; a failure well before that was
 * a refusal, or a connection the server closed at once.
 */
export function attemptFailure(attempt: Attempt, endedAt: number, sessionTimeoutMs: number): Error {
  const limitMs = Math.round((sessionTimeoutMs * 2) / 3);
  const timedOut = endedAt - attempt.startedAt >= limitMs * 0.9;
  if (attempt.reachedServer) {
    return new Error(
      timedOut
        ? `a server took the connection but set up no session within ${limitMs} ms (timed out; is it a ZooKeeper server, and serving?); ${NATIVE_LOG_HINT}`
        : `a server took the connection, then closed it before setting up a session (is it a ZooKeeper server, and serving?); ${NATIVE_LOG_HINT}`,
    );
  }
  return new Error(
    timedOut
      ? `no answer within ${limitMs} ms (timed out: a host that is down, or a firewall dropping packets); ${NATIVE_LOG_HINT}`
      : `connection refused, or closed by the server at once (no ZooKeeper server listening there, or one that is not serving); ${NATIVE_LOG_HINT}`,
  );
}

/** The C client's CLOSING and CONNECTIONLOSS codes. */
const ZCLOSING = -116;
const ZCONNECTIONLOSS = -4;

/**
 * The code that a call in flight on a handle that closed under it fails with. Closing a handle
 * completes its calls with CLOSING. When it was a handle we replaced (no connection attempt was
 * under way; the session goes on in a new one), that is a lost connection: the call's outcome is
 * unknown, and the retry loop may send it again. After our own close(), CLOSING stays.
 */
export function inFlightFailureCode(code: number, transportClosed: boolean): number {
  return code === ZCLOSING && !transportClosed ? ZCONNECTIONLOSS : code;
}
