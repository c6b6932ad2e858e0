import { InvalidArgumentError, TimeoutError } from '../errors';
import { createProtocolTransport } from '../protocol/ProtocolTransport';

/** A session to expire: its id, password and where its servers are. */
export interface SessionCredentials {
  readonly connectString: string;
  readonly sessionId: bigint;
  readonly sessionPassword: string;
}

/** Anything that can say which session it holds, such as a ZkClient. */
export interface HasSessionCredentials {
  getSessionCredentials(): SessionCredentials;
}

/**
 * Expires a session on the server, for real: it opens a second handle with the same session id and
 * password and closes it, so the server ends the session and deletes its ephemeral nodes. The
 * original holder then finds its session expired when it next talks to the server.
 */
export async function expireSession(target: SessionCredentials | HasSessionCredentials, timeoutMs = 30_000): Promise<void> {
  const creds = 'getSessionCredentials' in target ? target.getSessionCredentials() : target;
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
    // Waits for the server to end the session, so the next attach finds it expired.
    await handle.close();
  }
}
