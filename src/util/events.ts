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
