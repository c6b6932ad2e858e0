import { InvalidArgumentError, TimeoutError } from '../errors';
import { createProtocolTransport } from '../protocol/ProtocolTransport';

import type { HasSessionCredentials, SessionCredentials } from '../client/SessionCredentials';

export type { HasSessionCredentials, SessionCredentials };

/** Options of `expireSession`. */
export interface ExpireSessionOptions {
  /** Give up after this long with TimeoutError. Default 30 s. */
  timeoutMs?: number;
  /**
   * Where to reach the session's servers, when not where the client connects: a client behind a
   * FaultProxy that is cut can only be expired through the servers themselves.
   */
  connectString?: string;
}

/**
 * Expires a session on the server, for real: it opens a second handle with the same session id and
 * password and closes it, so the server ends the session and deletes its ephemeral nodes. The
 * original holder then finds its session expired when it next talks to the server.
 */
export async function expireSession(target: SessionCredentials | HasSessionCredentials, options: number | ExpireSessionOptions = {}): Promise<void> {
  const { timeoutMs = 30_000, connectString } = typeof options === 'number' ? { timeoutMs: options } : options;
  const own = 'getSessionCredentials' in target ? target.getSessionCredentials() : target;
  const creds = connectString === undefined ? own : { ...own, connectString };
  if (typeof creds.sessionId !== 'bigint' || creds.sessionId === 0n) {
    throw new InvalidArgumentError('expireSession needs a connected session (sessionId is 0)');
  }
  const deadline = Date.now() + timeoutMs;
  // Attach and close until the server answers an attach with "expired": only then is the session
  // gone and its ephemeral nodes deleted, so callers can rely on it when this resolves.
  while (Date.now() < deadline) {
    if ((await attachAndClose(creds, deadline - Date.now())) === 'expired') return;
  }
  throw new TimeoutError(`session 0x${creds.sessionId.toString(16)} did not expire within ${timeoutMs} ms`);
}

/** Opens a handle on the session; closes it if the server accepted it. */
async function attachAndClose(creds: SessionCredentials, timeoutMs: number): Promise<'closed' | 'expired'> {
  const handle = createProtocolTransport({
    connectString: creds.connectString,
    sessionTimeoutMs: 30_000,
    sessionId: creds.sessionId,
    sessionPassword: creds.sessionPassword,
  });
  try {
    return await new Promise<'closed' | 'expired'>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new TimeoutError(`could not attach to session 0x${creds.sessionId.toString(16)} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      handle.on('connected', () => {
        clearTimeout(timer);
        resolve('closed');
      });
      handle.on('closed', (reason) => {
        clearTimeout(timer);
        if (reason === 'expired') resolve('expired');
        else reject(new Error(`the second handle closed (${reason}) before it attached`));
      });
    });
  } finally {
    // The close request leaves at once, before the session's own client can take it back; the
    // wait is for the server to end the session, so that the next attach finds it expired.
    await handle.close();
  }
}
