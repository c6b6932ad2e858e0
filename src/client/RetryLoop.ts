import debug from 'debug';
import { ClientClosedError, SessionLostError, isZkError, type ZkError } from '../errors';
import { isRetryableError, type RetryPolicy } from '../retry';
import type { Transport } from '../transport/Transport';
import { abortReason } from '../util/async';
import { metrics, startClock } from '../metrics/channels';
import { now } from '../util/timers';
import type { Connection } from './Connection';
import type { Session } from './Session';

const log = debug('zk-recipes:client:retry');

/** What one operation brings to the retry loop. */
export interface OperationContext {
  /** What the operation is ('create', 'getData', ...): for metrics. */
  readonly operation: string;
  /** The path the operation is about, relative to the namespace: for errors and logs. */
  readonly path: string;
  readonly signal?: AbortSignal;
  /** Run only in this session: once it has ended, reject with SessionLostError instead of retrying in the next. */
  readonly session?: Session;
}

/**
 * Curator's RetryLoop: runs an operation on a connected transport; when it fails with a connection
 * problem, waits for a connection (up to `connectionTimeoutMs`) and tries again as long as the retry
 * policy allows. Other errors reject at once. An operation pinned to a session never runs in another.
 */
export class RetryLoop {
  constructor(
    private readonly connection: Connection,
    private readonly policy: RetryPolicy,
    private readonly connectionTimeoutMs: number,
  ) {}

  /** `attempt` counts from 0, so a caller can tell a first attempt from a retry after an uncertain outcome. */
  run<T>(ctx: OperationContext, fn: (t: Transport, attempt: number, session: Session) => Promise<T>): Promise<T> {
    const startedAt = startClock(metrics.operation);
    if (startedAt === 0) return this.attempts(ctx, fn, { retries: 0 });
    return this.measured(ctx, fn, startedAt);
  }

  private async measured<T>(ctx: OperationContext, fn: (t: Transport, attempt: number, session: Session) => Promise<T>, startedAt: number): Promise<T> {
    const tries = { retries: 0 };
    let code: string | undefined;
    try {
      return await this.attempts(ctx, fn, tries);
    } catch (err) {
      code = isZkError(err) ? err.code : 'ERROR';
      throw err;
    } finally {
      if (metrics.operation.hasSubscribers) {
        metrics.operation.publish({ operation: ctx.operation, path: ctx.path, durationMs: now() - startedAt, retries: tries.retries, code });
      }
    }
  }

  /**
   * The first attempt goes straight to the transport when the client is connected (in the
   * operation's session, when it is pinned) and the signal has not aborted: the loop below, with
   * its waits, is entered only on a failure it would retry. Otherwise the loop makes the checks
   * and the waits itself.
   */
  private attempts<T>(ctx: OperationContext, fn: (t: Transport, attempt: number, session: Session) => Promise<T>, tries: { retries: number }): Promise<T> {
    const { signal, session } = ctx;
    const live = signal?.aborted || session?.isEnded || !this.connection.isOpen ? undefined : this.connection.live();
    if (live === undefined || (session !== undefined && live.session !== session)) return this.loop(ctx, fn, tries, 0, now());
    const startedAt = now();
    const t = live.transport;
    let first: Promise<T>;
    try {
      first = fn(t, 0, live.session);
    } catch (err) {
      first = Promise.reject(err);
    }
    return first.then(
      (result) => {
        this.connection.answered(startedAt);
        return result;
      },
      async (caught: unknown) => {
        await this.afterFailure(ctx, caught, t, 0, startedAt);
        tries.retries = 1;
        return this.loop(ctx, fn, tries, 1, startedAt);
      },
    );
  }

  private async loop<T>(
    ctx: OperationContext,
    fn: (t: Transport, attempt: number, session: Session) => Promise<T>,
    tries: { retries: number },
    from: number,
    startedAt: number,
  ): Promise<T> {
    const { path, signal, session } = ctx;
    for (let attempt = from; ; attempt++) {
      tries.retries = attempt;
      if (signal?.aborted) throw abortReason(signal);
      this.connection.assertOpen();
      let t: Transport | undefined;
      try {
        if (session?.isEnded) throw sessionLost(session, path);
        let live = this.connection.live();
        if (live === undefined) {
          const waitStart = now();
          live = await this.connection.waitForConnection(this.connectionTimeoutMs, signal);
          if (live === undefined) throw this.connection.connectionTimeout(now() - waitStart, path);
        }
        t = live.transport;
        if (session !== undefined && live.session !== session) throw sessionLost(session, path);
        const sentAt = now();
        const result = await fn(live.transport, attempt, live.session);
        this.connection.answered(sentAt);
        return result;
      } catch (caught) {
        await this.afterFailure(ctx, caught, t, attempt, startedAt);
      }
    }
  }

  /**
   * What follows a failed attempt: rejects with the error when it is not retried (not retryable,
   * pinned to a session that is over, or the policy gives up); otherwise resolves once the
   * policy's back-off has passed.
   */
  private async afterFailure(ctx: OperationContext, caught: unknown, t: Transport | undefined, attempt: number, startedAt: number): Promise<void> {
    const { path, signal, session } = ctx;
    if (t !== undefined && isZkError(caught, 'SESSIONEXPIRED')) this.connection.sessionExpiredOn(t);
    const err = this.translate(caught, t, path);
    if (!isRetryableError(err)) throw err;
    // An operation pinned to a session cannot succeed in another one.
    if (session !== undefined && (session.isEnded || isZkError(err, 'SESSIONEXPIRED') || isZkError(err, 'SESSION_LOST'))) {
      throw isZkError(err, 'SESSION_LOST') ? err : sessionLost(session, path, err);
    }
    const delayMs = this.policy.allowRetry(attempt, now() - startedAt, err);
    if (delayMs === false) {
      log('%s at %s: giving up after %d retries (session %s)', (err as ZkError).code, path, attempt, this.connection.session ?? '-');
      throw err;
    }
    log('%s at %s: retry %d in %d ms (session %s)', (err as ZkError).code, path, attempt + 1, delayMs, this.connection.session ?? '-');
    await this.connection.backOff(delayMs, signal);
  }

  /** A transport closed under an operation means its session is gone, or the client closed. */
  private translate(err: unknown, t: Transport | undefined, path: string): unknown {
    if (this.connection.isClosed && !(err instanceof ClientClosedError) && isZkError(err)) {
      return new ClientClosedError(`the client closed during the operation at ${path}`, { path, cause: err });
    }
    if (isZkError(err) && (err.code === 'CLOSING' || err.code === 'INVALIDSTATE') && t !== undefined && this.connection.sessionOf(t) === undefined) {
      return new SessionLostError('expired', `the session ended during the operation at ${path}`, { path, cause: err });
    }
    return err;
  }
}

function sessionLost(session: Session, path: string, cause?: unknown): SessionLostError {
  const ended = session.endReason;
  if (ended instanceof SessionLostError && cause === undefined) return new SessionLostError(ended.reason, `${ended.message} (operation at ${path})`, { path, cause: ended });
  return new SessionLostError(ended instanceof SessionLostError ? ended.reason : 'expired', `session ${session} has ended (operation at ${path})`, {
    path,
    cause: cause ?? ended,
  });
}
