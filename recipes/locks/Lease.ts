/**
 * A held lock: the ownership token `acquire()` returns. Release it once; later releases do
 * nothing. `await using lease = await lock.acquire()` releases it at the end of the scope.
 */
export interface Lease extends AsyncDisposable {
  /** Full path of our lock node (relative to the client's namespace). */
  readonly node: string;
  /** Strictly increasing from holder to holder on this lock path. See `Acquisition.fencingToken`. */
  readonly fencingToken: bigint;
  /** Aborted with a LockLostError when the lock can no longer be trusted. */
  readonly signal: AbortSignal;
  /** Whether `release()` has been called. */
  readonly released: boolean;
  /** Releases the lock (or, for a re-entrant hold, one level of it). Idempotent. */
  release(): Promise<void>;
}

/** A lease that runs `onRelease` once. */
export class SimpleLease implements Lease {
  private releasing: Promise<void> | undefined;

  constructor(
    readonly node: string,
    readonly fencingToken: bigint,
    private readonly getSignal: () => AbortSignal,
    private readonly onRelease: () => Promise<void>,
  ) {}

  get signal(): AbortSignal {
    return this.getSignal();
  }

  get released(): boolean {
    return this.releasing !== undefined;
  }

  release(): Promise<void> {
    this.releasing ??= this.onRelease();
    return this.releasing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
