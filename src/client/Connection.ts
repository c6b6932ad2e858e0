import { inspect, type InspectOptions } from 'node:util';
import debug from 'debug';
import { ClientClosedError, ConnectionTimeoutError, IllegalStateError, SessionLostError, isZkError, serverError, type SessionEndReason, type ZkError } from '../errors';
import { splitConnectString, type Transport, type TransportFactory } from '../transport/Transport';
import { abortReason } from '../util/async';
import { showAs } from '../util/redact';
import { now, startTimer } from '../util/timers';
import { ConnectionState } from './ConnectionState';
import type { ConnectionStateManager } from './ConnectionStateManager';
import type { ResolvedClientOptions } from './options';
import { EnsembleTracker } from './EnsembleTracker';
import { Session } from './Session';
import { stallDetector } from './StallDetector';
import type { OneShotWatches } from './OneShotWatches';

const log = debug('zk-recipes:client');

/** A connected transport and the session it serves. */
export interface Live {
  readonly transport: Transport;
  readonly session: Session;
}

type Lifecycle = 'LATENT' | 'STARTED' | 'CLOSED';

/**
 * How long before the server can expire a silent session the client gives it up: a tenth of the
 * session timeout, at least 100 ms and at most 2 s. It covers the time a reply takes to reach us
 * after the server last touched the session, and timers that fire a little late.
 */
export function lostMarginMs(sessionTimeoutMs: number): number {
  return Math.min(2_000, Math.max(100, sessionTimeoutMs / 10));
}

/**
 * The client's connection: one transport at a time (one session attempt), its session as a value,
 * and the state machine Curator's clients follow. A transport that connects gives CONNECTED, then
 * RECONNECTED; one that drops gives SUSPENDED; a session that ends gives LOST and a new transport.
 *
 * LOST is counted from the last time the server was heard from, not from SUSPENDED as Curator
 * counts it: the server expires a session one session timeout after it last heard from the client,
 * so a client that noticed the silence late (a read timeout comes two thirds of the way) would
 * otherwise still trust its session when the server had already given its ephemeral nodes away.
 * The client gives up `lostMarginMs` before the server can.
 */
export class Connection {
  private lifecycle: Lifecycle = 'LATENT';
  private transport: Transport | undefined;
  private sessionValue: Session | undefined;
  private connected = false;
  private everConnected = false;
  private cancelLost: (() => void) | undefined;
  /** When the latest request that the server answered was sent: proof that the session lived then. */
  private answeredSentAt = -Infinity;
  private fatal: ZkError | undefined;
  /** Waits for a connection (or a back-off), each checked on every change; made with the first. */
  private waiters: Set<() => void> | undefined;
  /** The servers (and chroot) of every new session: the given ones, then those the ensemble tracker found. */
  private connectStringValue: string;
  private readonly tracker: EnsembleTracker | undefined;

  constructor(
    private readonly options: ResolvedClientOptions,
    private readonly states: ConnectionStateManager,
    private readonly watches: OneShotWatches,
    private readonly createTransport: TransportFactory,
  ) {
    this.connectStringValue = options.connectString;
    this.tracker = options.ensembleTracker ? new EnsembleTracker(this) : undefined;
  }

  /** The connect string in use: the given one, until the ensemble tracker moves the client. */
  get connectString(): string {
    return this.connectStringValue;
  }

  /**
   * Moves the client to these servers ("host:port,…"), its chroot kept: the current session's
   * transport (see Transport.updateServers), and every later session. The same servers in another
   * order change nothing.
   */
  updateServers(hosts: string): void {
    const { servers, chroot } = splitConnectString(this.connectStringValue);
    if (sameServers(servers, hosts)) return;
    log('the ensemble moved: %s, was %s', hosts, servers);
    this.connectStringValue = hosts + chroot;
    this.transport?.updateServers?.(hosts);
  }

  /** What `util.inspect` shows: no transport, whose credentials stay out of logs. */
  [inspect.custom](_depth: number, options: InspectOptions, show: typeof inspect = inspect): string {
    return showAs('Connection', { lifecycle: this.lifecycle, connected: this.connected, session: this.sessionValue, options: this.options }, options, show);
  }

  get isStarted(): boolean {
    return this.lifecycle === 'STARTED';
  }

  get isClosed(): boolean {
    return this.lifecycle === 'CLOSED';
  }

  get isConnected(): boolean {
    return this.connected;
  }

  /** The current session: set once a transport has connected, until the session ends. */
  get session(): Session | undefined {
    return this.sessionValue;
  }

  get negotiatedSessionTimeoutMs(): number {
    return this.transport?.negotiatedSessionTimeoutMs ?? 0;
  }

  get sessionPassword(): string {
    return this.transport?.sessionPassword ?? '';
  }

  /** The transport of the current session attempt, connected or not. */
  get transportNow(): Transport | undefined {
    return this.transport;
  }

  /** The connected transport and its session; undefined while there is no connection. */
  live(): Live | undefined {
    return this.connected && this.transport && this.sessionValue ? { transport: this.transport, session: this.sessionValue } : undefined;
  }

  /** The session a transport served, if it is the current one. */
  sessionOf(t: Transport | undefined): Session | undefined {
    return t !== undefined && t === this.transport ? this.sessionValue : undefined;
  }

  start(): void {
    if (this.lifecycle !== 'LATENT') throw new IllegalStateError(`a client can be started only once (it is ${this.lifecycle})`);
    this.lifecycle = 'STARTED';
    // Released by close(), the only way out of STARTED.
    stallDetector.use();
    this.transport = this.newTransport();
  }

  /**
   * Whether what the connection says now can be trusted: connected, and this process has not
   * stalled (paused, or its event loop blocked) for a third of the session timeout or more, or
   * has since had an answer to a request sent after that stall. After such a stall, replies and
   * events the server sent before it expired the session are read before the client can notice
   * the expiry, and they may be acted on long after the event loop runs again (as they wake
   * recipes one after another): only an answer to a request sent after the stall shows that the
   * session outlived it.
   */
  get isTrusted(): boolean {
    if (!this.connected) return false;
    const limitMs = (this.transport?.negotiatedSessionTimeoutMs || this.options.sessionTimeoutMs) / 3;
    if (stallDetector.stalledMs >= limitMs) return false;
    const stallEndedAt = stallDetector.lastStallEndedAt(limitMs);
    return stallEndedAt === undefined || this.answeredSentAt > stallEndedAt;
  }

  /** The server answered a request sent at `sentAt` (the monotonic clock of `now()`). */
  answered(sentAt: number): void {
    if (sentAt > this.answeredSentAt) this.answeredSentAt = sentAt;
  }

  /** Whether operations can run: started, not closed, not refused by the server for good (`assertOpen` would not throw). */
  get isOpen(): boolean {
    return this.lifecycle === 'STARTED' && this.fatal === undefined;
  }

  /** Throws when no operation can run: not started, closed, or refused by the server for good. */
  assertOpen(): void {
    if (this.lifecycle === 'CLOSED') throw new ClientClosedError();
    if (this.lifecycle === 'LATENT') throw new IllegalStateError('the client is not started: call start() first');
    if (this.fatal) throw this.fatal;
  }

  /**
   * Resolves with the live connection, or undefined when `timeoutMs` passes first. Rejects with the
   * signal's reason on abort, and when the client closes or is refused for good.
   */
  waitForConnection(timeoutMs: number, signal: AbortSignal | undefined): Promise<Live | undefined> {
    return this.waitUntil(timeoutMs, signal, () => this.live());
  }

  /**
   * The wait between two attempts of a retried operation: resolves after `ms`, and rejects as
   * `waitForConnection` does, at once, when the signal aborts or the client closes or is refused
   * for good. An operation that fails just before `close()` then ends with the close, not after
   * its back-off.
   */
  async backOff(ms: number, signal: AbortSignal | undefined): Promise<void> {
    await this.waitUntil(ms, signal, () => undefined);
  }

  /**
   * Resolves with what `ready` returns once it returns something, checked now and on every change
   * of connection; with undefined when `timeoutMs` passes first. Rejects with the signal's reason
   * on abort, and when the client closes or is refused for good.
   */
  private waitUntil<T>(timeoutMs: number, signal: AbortSignal | undefined, ready: () => T | undefined): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
      const done = () => {
        this.waiters?.delete(check);
        cancelTimer();
        signal?.removeEventListener('abort', onAbort);
      };
      const check = () => {
        if (this.lifecycle === 'CLOSED' || this.fatal) {
          done();
          reject(this.fatal ?? new ClientClosedError());
          return;
        }
        const value = ready();
        if (value !== undefined) {
          done();
          resolve(value);
        }
      };
      const onAbort = () => {
        done();
        reject(abortReason(signal as AbortSignal));
      };
      const cancelTimer = startTimer(timeoutMs, () => {
        done();
        resolve(undefined);
      });
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      (this.waiters ??= new Set()).add(check);
      check();
    });
  }

  /** The error for a wait for a connection that ran out: where, why the last attempt failed, and how long it waited. */
  connectionTimeout(waitedMs: number, path?: string): ConnectionTimeoutError {
    const cause = this.transport?.lastConnectError;
    const why = cause ? `; the last attempt failed: ${cause.message}` : '';
    return new ConnectionTimeoutError(`no connection to ${this.connectStringValue} within ${Math.round(waitedMs)} ms${why}`, { path, cause });
  }

  /**
   * Ends the session and closes the transport: the server deletes the session's ephemeral nodes.
   * The session's signal aborts with a ClientClosedError before anything else, so that nothing
   * held under it is trusted a moment longer. Never blocks the event loop. Idempotent.
   */
  async close(): Promise<void> {
    if (this.lifecycle === 'CLOSED') return;
    if (this.lifecycle === 'STARTED') stallDetector.release();
    this.lifecycle = 'CLOSED';
    this.tracker?.close();
    this.cancelLost?.();
    const t = this.transport;
    const session = this.sessionValue;
    this.transport = undefined;
    this.connected = false;
    session?.end(new ClientClosedError('the client closed, ending its session'));
    this.watches.endAll();
    this.notifyWaiters();
    await t?.close();
    log('client closed (session %s)', session ?? '-');
  }

  // ---------------------------------------------------------------- transport events

  private newTransport(): Transport {
    const { sessionTimeoutMs, tls, maxFrameBytes } = this.options;
    const t = this.createTransport({ connectString: this.connectStringValue, sessionTimeoutMs, tls, maxFrameBytes });
    // With credentials, a new session counts as connected only once the server has accepted them
    // all: a refusal then ends it before anyone could take it for a usable one.
    let unsettledAuths = this.options.authInfo.length;
    let up = false;
    t.on('connected', () => {
      up = true;
      if (t === this.transport && unsettledAuths === 0) this.onConnected(t);
    });
    t.on('connecting', (cause) => {
      up = false;
      if (t === this.transport) this.onDisconnected(t, cause);
    });
    t.on('closed', (reason) => {
      if (t === this.transport && this.lifecycle === 'STARTED') this.onSessionEnded(reason === 'authFailed' ? 'authFailed' : 'expired');
    });
    // No credentials (most clients): no closure to count them.
    if (unsettledAuths === 0) return t;
    const settled = () => {
      unsettledAuths--;
      if (unsettledAuths === 0 && up && t === this.transport && !t.isClosed && this.lifecycle === 'STARTED') this.onConnected(t);
    };
    for (const { scheme, auth } of this.options.authInfo) {
      // Queued by the transport until the connection is up, and sent again on reconnects. A refusal
      // ends the session: the protocol transport also closes ('authFailed'), the native binding may
      // not. Any other failure leaves the credentials to the transport's next connection.
      t.addAuth(scheme, auth).then(settled, (err: unknown) => {
        if (!isZkError(err, 'AUTHFAILED')) {
          log('adding %s auth failed: %O', scheme, err);
          settled();
        } else if (t === this.transport && this.lifecycle === 'STARTED') this.onSessionEnded('authFailed');
      });
    }
    return t;
  }

  private onConnected(t: Transport): void {
    this.connected = true;
    this.cancelLost?.();
    this.cancelLost = undefined;
    if (this.sessionValue?.id !== t.sessionId) this.sessionValue = new Session(t.sessionId);
    log('connected to %s, session %s, timeout %d ms', this.connectStringValue, this.sessionValue, t.negotiatedSessionTimeoutMs);
    if (this.everConnected) this.states.set(ConnectionState.RECONNECTED, this.sessionValue);
    else {
      this.everConnected = true;
      this.states.set(ConnectionState.CONNECTED, this.sessionValue);
    }
    this.notifyWaiters();
    this.tracker?.follow(t);
  }

  private onDisconnected(t: Transport, cause: Error | undefined): void {
    if (!this.connected) {
      if (cause) log('connecting to %s: %s', this.connectStringValue, cause.message);
      return;
    }
    this.connected = false;
    const timeoutMs = t.negotiatedSessionTimeoutMs || this.options.sessionTimeoutMs;
    const heardAt = t.lastHeardAt || now();
    const lostInMs = Math.max(0, heardAt + timeoutMs - lostMarginMs(timeoutMs) - now());
    log(
      'disconnected from %s (session %s%s); last heard from the server %d ms ago, LOST in %d ms',
      this.connectStringValue,
      this.sessionValue ?? '-',
      cause ? `: ${cause.message}` : '',
      Math.round(now() - heardAt),
      Math.round(lostInMs),
    );
    this.states.set(ConnectionState.SUSPENDED, this.sessionValue);
    this.cancelLost = startTimer(lostInMs, () => {
      this.cancelLost = undefined;
      if (t === this.transport && !this.connected && this.lifecycle === 'STARTED') this.onSessionEnded('suspendedTooLong');
    });
  }

  /**
   * The server answered an operation on `t` with SESSIONEXPIRED: the session is over, whatever
   * the transport has said. (A server can say so on a connection it keeps open: when a session
   * moved to another connection is closed there, its first connection may stay up and answer
   * every request with SESSIONEXPIRED, with no expiry at a handshake to tell the transport.)
   */
  sessionExpiredOn(t: Transport): void {
    if (t !== this.transport || this.sessionValue === undefined || this.lifecycle !== 'STARTED') return;
    log('session %s: the server answered SESSIONEXPIRED', this.sessionValue);
    this.onSessionEnded('expired');
  }

  private onSessionEnded(reason: Exclude<SessionEndReason, 'closed'>): void {
    this.cancelLost?.();
    this.cancelLost = undefined;
    const old = this.transport;
    const session = this.sessionValue;
    this.connected = false;
    this.sessionValue = undefined;
    log('session %s ended: %s', session ?? '-', reason);
    // LOST first, so that whoever hears of the session's end sees the state that says so.
    if (this.everConnected) this.states.set(ConnectionState.LOST, this.sessionValue);
    session?.end(new SessionLostError(reason, `session ${session} ended: ${describeEnd(reason)}`));
    this.watches.endFor(old);
    void old?.close();
    if (reason === 'authFailed') {
      this.fatal = serverError('AUTHFAILED', { message: 'authentication failed: the server refused the client credentials' });
      this.transport = undefined;
      this.notifyWaiters();
      return;
    }
    this.transport = this.newTransport();
  }

  private notifyWaiters(): void {
    if (this.waiters !== undefined) for (const wake of [...this.waiters]) wake();
  }
}

function describeEnd(reason: SessionEndReason): string {
  switch (reason) {
    case 'expired':
      return 'the server expired it';
    case 'suspendedTooLong':
      return 'no word from the server for as long as it keeps a silent session';
    case 'authFailed':
      return 'the server refused the credentials';
    case 'closed':
      return 'the client closed';
  }
}

/** Whether two "host:port,…" lists name the same servers, in any order. */
function sameServers(a: string, b: string): boolean {
  const servers = (list: string) => list.split(',').map((h) => h.trim()).sort().join(',');
  return servers(a) === servers(b);
}
