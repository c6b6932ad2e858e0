/** Timers that honour any delay, and a clock for deadlines. */

/** setTimeout's longest delay (2^31-1 ms, about 24.8 days); Node fires a longer one after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Milliseconds on a monotonic clock: the clock of every deadline in zk-recipes. */
export function now(): number {
  return performance.now();
}

/**
 * Calls `fn` after `ms`, however large (a longer delay is re-armed on the way; Infinity never
 * fires). Returns a function that cancels it. The timer does not keep the process alive when
 * `unref` is set.
 */
export function startTimer(ms: number, fn: () => void, options: { unref?: boolean } = {}): () => void {
  if (ms === Infinity) return () => undefined;
  const due = now() + Math.max(0, ms);
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const left = due - now();
    timer = setTimeout(left > MAX_TIMER_MS ? arm : fn, Math.min(Math.max(0, left), MAX_TIMER_MS));
    if (options.unref) timer.unref();
  };
  arm();
  return () => clearTimeout(timer);
}

interface DelayEntry {
  readonly due: number;
  fn: (() => void) | undefined;
}

/**
 * Timers of one fixed delay that share one `setTimeout`: for a bound set on every call of a hot
 * path (each release waits for its delete at most 1 s), where a timer per call costs more than
 * the call's own work. Set with one delay, the entries fall due in the order they were set, so
 * they wait in a queue; a cancelled entry is dropped once it reaches the head. The one timer is
 * armed for the head's due time and re-armed when it fires. It is unref'd: what such a bound
 * waits for (a request) keeps the process alive itself, and a timer left armed after every entry
 * was cancelled must not.
 */
export class FixedDelayTimers {
  private readonly queue: DelayEntry[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer is due. */
  private armedFor = 0;

  constructor(readonly delayMs: number) {}

  /** Calls `fn` after the delay; returns a function that cancels it. */
  start(fn: () => void): () => void {
    const at = now();
    const entry: DelayEntry = { due: at + this.delayMs, fn };
    this.queue.push(entry);
    // A timer long overdue was made under other timers (a test's fake clock) and may never fire.
    if (this.timer !== undefined && at > this.armedFor + this.delayMs) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.timer === undefined) this.arm((this.queue[this.head] as DelayEntry).due - at);
    return () => {
      if (entry.fn === undefined) return;
      entry.fn = undefined;
      this.dropCancelled();
    };
  }

  /** Entries set and not yet fired or cancelled, and cancelled ones not yet dropped. */
  get size(): number {
    return this.queue.length - this.head;
  }

  private arm(ms: number): void {
    this.armedFor = now() + ms;
    this.timer = setTimeout(() => this.fire(), Math.min(Math.max(1, Math.ceil(ms)), MAX_TIMER_MS));
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    // The timer's clock ticks in whole milliseconds: an entry due within the next one is due.
    const at = now() + 1;
    for (;;) {
      const entry = this.queue[this.head] as DelayEntry | undefined;
      if (entry === undefined) break;
      if (entry.fn !== undefined && entry.due > at) {
        // Unless a callback fired above set an entry, which armed the timer already.
        if (this.timer === undefined) this.arm(entry.due - now());
        break;
      }
      const fn = entry.fn;
      entry.fn = undefined;
      this.advance();
      fn?.();
    }
  }

  private dropCancelled(): void {
    while (this.head < this.queue.length && this.queue[this.head].fn === undefined) this.advance();
  }

  private advance(): void {
    this.head++;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }
}
