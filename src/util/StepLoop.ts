/**
 * The coalescing "kick, run one step, back off" loop of the recipes that react to ZooKeeper
 * (LeaderLatch, the queue consumer, observeLeader): steps run one at a time; a kick during a step
 * makes exactly one more step afterwards, so no change is missed and none is handled twice at once;
 * a step that fails is tried again after a back-off that doubles, unless a kick comes first.
 */
import { Mutex } from 'async-mutex';
import { startTimer } from './timers';

export interface StepLoopOptions {
  /** The first back-off after a failed step. Default 100 ms. */
  firstRetryMs?: number;
  /** The longest back-off. Default 5 s. */
  maxRetryMs?: number;
  /** Told of each failed step and the back-off before the next. Must not throw. */
  onError?: (err: unknown, retryInMs: number) => void;
}

export class StepLoop {
  /** Steps run one at a time: the mutex holds while a drain runs. */
  private readonly mutex = new Mutex();
  private dirty = false;
  private stopped = false;
  private idlePromise: Promise<void> = Promise.resolve();
  private cancelRetry: (() => void) | undefined;
  private readonly firstRetryMs: number;
  private readonly maxRetryMs: number;
  private retryMs: number;

  constructor(
    private readonly step: () => Promise<void>,
    private readonly options: StepLoopOptions = {},
  ) {
    this.firstRetryMs = options.firstRetryMs ?? 100;
    this.maxRetryMs = options.maxRetryMs ?? 5_000;
    this.retryMs = this.firstRetryMs;
  }

  /** Asks for a step: now if none runs, or once more after the one running. */
  kick(): void {
    if (this.stopped) return;
    this.dirty = true;
    this.cancelRetry?.();
    this.cancelRetry = undefined;
    // A drain under way takes the kick along.
    if (this.mutex.isLocked()) return;
    this.idlePromise = this.mutex.runExclusive(() => this.drain()).then(() => {
      // A kick between the drain's last look and the mutex's release found it locked: run for it.
      if (this.dirty && !this.stopped && this.cancelRetry === undefined) this.kick();
    });
  }

  /** Whether a kick is waiting for its step. A step can check it to end early. */
  get pending(): boolean {
    return this.dirty;
  }

  /** Resolves once no step runs. */
  get idle(): Promise<void> {
    return this.idlePromise;
  }

  /** No more steps (the one running finishes). Idempotent. */
  stop(): void {
    this.stopped = true;
    this.cancelRetry?.();
    this.cancelRetry = undefined;
  }

  private async drain(): Promise<void> {
    while (this.dirty && !this.stopped) {
      this.dirty = false;
      try {
        await this.step();
        this.retryMs = this.firstRetryMs;
      } catch (err) {
        if (this.stopped) break;
        this.backOff(err);
        break;
      }
    }
  }

  private backOff(err: unknown): void {
    const delayMs = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, this.maxRetryMs);
    this.dirty = false;
    this.options.onError?.(err, delayMs);
    this.cancelRetry = startTimer(
      delayMs,
      () => {
        this.cancelRetry = undefined;
        this.kick();
      },
      { unref: true },
    );
  }
}
