import { linkedSignal } from '../../src/recipeKit';
import { LockLostError } from './errors';

/**
 * A held lock: the ownership token `acquire()` returns. Release it once; later releases do
 * nothing. `await using lease = await lock.acquire()` releases it at the end of the scope.
 */
export interface Lease extends AsyncDisposable {
  /** Full path of our lock node (relative to the client's namespace). */
  readonly node: string;
  /** Strictly increasing from holder to holder on this lock path. See `Acquisition.fencingToken`. */
  readonly fencingToken: bigint;
  /**
   * Aborted with a LockLostError when the lock can no longer be trusted (SUSPENDED under the
   * 'standard' policy, LOST, the client closed, the node deleted or not ours), and when the lease
   * is released (reason 'RELEASED').
   */
  readonly signal: AbortSignal;
  /** Whether `release()` has been called. */
  readonly released: boolean;
  /**
   * Releases the lease (for a re-entrant hold, one level of it). Its signal aborts at once. The
   * call resolves once the server has confirmed the delete of the lock node, or, while
   * disconnected or when the server is slow to answer, once the delete is left to the background
   * (retried until done or the session ends). Idempotent.
   */
  release(): Promise<void>;
}

/** A lease that runs `onRelease` once, and whose signal follows its hold's and its own release. */
export class SimpleLease implements Lease {
  private releasing: Promise<void> | undefined;
  private link: ReturnType<typeof linkedSignal> | undefined;

  constructor(
    readonly node: string,
    readonly fencingToken: bigint,
    private readonly holdSignal: () => AbortSignal,
    private readonly onRelease: () => Promise<void>,
  ) {}

  get signal(): AbortSignal {
    // Made on first use: asking the hold for its signal may start watching its node.
    this.link ??= linkedSignal([this.holdSignal()]);
    if (this.releasing !== undefined) this.link.abort(new LockLostError('RELEASED', { path: this.node }));
    return this.link.signal;
  }

  get released(): boolean {
    return this.releasing !== undefined;
  }

  release(): Promise<void> {
    if (this.releasing === undefined) {
      this.link?.abort(new LockLostError('RELEASED', { path: this.node }));
      this.releasing = this.onRelease();
    }
    return this.releasing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
