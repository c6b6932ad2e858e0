import { InvalidArgumentError, TimeoutError } from '../errors';
import { createNativeTransport } from '../transport/NativeTransport';

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
  const handle = createNativeTransport({
    connectString: creds.connectString,
    sessionTimeoutMs: 30_000,
    sessionId: creds.sessionId,
    sessionPassword: creds.sessionPassword,
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new TimeoutError(`could not attach to session 0x${creds.sessionId.toString(16)} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      handle.on('connected', () => {
        clearTimeout(timer);
        resolve();
      });
      handle.on('closed', (reason) => {
        clearTimeout(timer);
        // Already expired: nothing left to do.
        if (reason === 'expired') resolve();
        else reject(new Error(`the second handle closed (${reason}) before it attached`));
      });
    });
  } finally {
    handle.close();
  }
}
