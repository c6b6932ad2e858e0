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
