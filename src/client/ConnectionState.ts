/**
 * Curator's connection states.
 * - CONNECTED: the first connection of the client.
 * - SUSPENDED: the connection dropped; the session may still be alive on the server.
 * - RECONNECTED: connected again, either to the same session or, after LOST, to a new one.
 * - LOST: the session is gone: the server expired it, or SUSPENDED lasted longer than the
 *   negotiated session timeout (then the client closes its handle and starts a new session).
 * - READ_ONLY: connected to a read-only server. Kept for parity with Curator; the native binding
 *   cannot ask for read-only mode, so zk-recipes never enters it.
 */
export const ConnectionState = Object.freeze({
  CONNECTED: 'CONNECTED',
  SUSPENDED: 'SUSPENDED',
  RECONNECTED: 'RECONNECTED',
  LOST: 'LOST',
  READ_ONLY: 'READ_ONLY',
} as const);
export type ConnectionState = (typeof ConnectionState)[keyof typeof ConnectionState];

/**
 * What a 'stateChanged' listener gets as `previous`: a ConnectionState, or 'LATENT' on the first
 * event (the client had not connected yet; the name of Curator's state for a client not yet
 * started). Curator's listeners get no previous state at all; their first event is CONNECTED too.
 */
export type PreviousConnectionState = ConnectionState | 'LATENT';

/** Whether the state has a live connection. */
export function isConnectedState(state: ConnectionState | undefined): boolean {
  return state === 'CONNECTED' || state === 'RECONNECTED' || state === 'READ_ONLY';
}

/**
 * Which states a recipe must treat as "I can no longer trust what I hold":
 * - 'standard' (Curator's StandardConnectionStateErrorPolicy): SUSPENDED and LOST;
 * - 'session' (Curator's SessionConnectionStateErrorPolicy): only LOST.
 */
export type ConnectionStateErrorPolicy = 'standard' | 'session';

/** Whether `state` is an error state under `policy`. */
export function isErrorState(policy: ConnectionStateErrorPolicy, state: ConnectionState): boolean {
  return state === 'LOST' || (policy === 'standard' && state === 'SUSPENDED');
}
