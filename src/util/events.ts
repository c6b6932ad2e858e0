import type { EventEmitter } from 'node:events';

/** Adds `listener` for `event` and returns a function that removes it. */
export function subscribe<T extends Record<keyof T, unknown[]>, K extends keyof T & string>(
  emitter: EventEmitter<T>,
  event: K,
  listener: (...args: T[K]) => void,
): () => void {
  // The typed overloads of EventEmitter do not narrow through a generic key; the map makes it safe.
  const untyped = emitter as unknown as EventEmitter;
  const wrapped = listener as (...args: unknown[]) => void;
  untyped.on(event, wrapped);
  return () => untyped.off(event, wrapped);
}

/**
 * Emits `event` to each listener inside a try: one that throws is logged with `log`, and the
 * others still hear. Never throws. (EventEmitter.emit stops at the first listener that throws,
 * and passes the error to the emitter: a listener's bug must not break a recipe.)
 */
export function emitSafely<T extends Record<keyof T, unknown[]>, K extends keyof T & string>(
  emitter: EventEmitter<T>,
  event: K,
  args: T[K],
  log: (format: string, ...values: unknown[]) => void,
): void {
  const untyped = emitter as unknown as EventEmitter;
  // rawListeners: `once` wrappers included, which remove themselves as they run.
  for (const listener of untyped.rawListeners(event)) {
    try {
      (listener as (...a: unknown[]) => void).apply(emitter, args);
    } catch (err) {
      log('a %s listener threw: %O', event, err);
    }
  }
}
