import { setMaxListeners } from 'node:events';
import { isZkError } from '../errors';

/**
 * One ZooKeeper session of a client, as a value: its id, and a signal that aborts when the session
 * ends, like etcd's Session.Done(). The reason is a SessionLostError (expired, suspended for longer
 * than the session timeout, refused credentials) or a ClientClosedError (the client closed).
 *
 * Recipes hold on to the session their ephemeral nodes belong to: a node of an ended session is
 * gone, or going, whatever a later read says. `client.session` is the current one; creates say
 * which session made the node; reads can be pinned to a session.
 */
export class Session {
  /** Made when someone asks for the signal: an idle session (most of them) builds no controller. */
  private ended: AbortController | undefined;
  /** Why the session ended; undefined while it lasts. */
  private reason: Error | undefined;
  /** What `onEnd` asked to call when the session ends. */
  private endCallbacks: Set<() => void> | undefined;

  /** @internal Made by the client when a session is established. */
  constructor(readonly id: bigint) {}

  /** Aborts when the session ends. */
  get signal(): AbortSignal {
    if (this.ended === undefined) {
      this.ended = new AbortController();
      // Every lease, latch and watch of the session listens to it.
      setMaxListeners(Infinity, this.ended.signal);
      if (this.reason !== undefined) this.ended.abort(this.reason);
    }
    return this.ended.signal;
  }

  get isEnded(): boolean {
    return this.reason !== undefined;
  }

  /** Why the session ended; undefined while it lasts. */
  get endReason(): unknown {
    return this.reason;
  }

  /** Whether the session ended because the client closed. */
  get closedByClient(): boolean {
    return isZkError(this.endReason, 'CLIENT_CLOSED');
  }

  /**
   * Calls `fn` once, synchronously, when the session ends, before the signal's listeners hear of
   * it; returns a function that forgets it. For what is set up and taken down on every wait (a
   * watch pinned to the session): a Set entry costs less than a listener on `signal`. Call it only
   * while the session lasts.
   *
   * @internal For the client's watches; not in the published declarations.
   */
  onEnd(fn: () => void): () => void {
    // As a listener added to an aborted signal: never called.
    if (this.reason !== undefined) return () => undefined;
    const callbacks = (this.endCallbacks ??= new Set());
    callbacks.add(fn);
    return () => {
      callbacks.delete(fn);
    };
  }

  /** @internal Ends the session. Called by the client only: it aborts the signal of every lease on the session. */
  end(reason: Error): void {
    if (this.reason !== undefined) return;
    // Set first: whoever hears the abort sees the session ended, and why.
    this.reason = reason;
    const callbacks = this.endCallbacks;
    this.endCallbacks = undefined;
    if (callbacks !== undefined) {
      for (const fn of callbacks) {
        try {
          fn();
        } catch (err) {
          // As a throwing abort listener's error is: reported, and the others still hear.
          process.nextTick(() => {
            throw err;
          });
        }
      }
    }
    this.ended?.abort(reason);
  }

  toString(): string {
    return `0x${this.id.toString(16)}`;
  }
}
