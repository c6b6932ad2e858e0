/**
 * The listeners of a few events, kept in a plain object: what an EventEmitter keeps for them,
 * without its dictionary of events (about 250 bytes with the emitter itself), for an object there
 * is one of per session. An event's lone listener is kept as itself; an array from the second on.
 */
export type ListenerSlots<E> = { [K in keyof E]?: E[K] | Array<E[K]> };

/** Adds `listener` for `event`. The same listener added twice is called twice, as with EventEmitter. */
export function addListener<E, K extends keyof E>(slots: ListenerSlots<E>, event: K, listener: E[K]): void {
  const kept = slots[event];
  if (kept === undefined) slots[event] = listener;
  else if (Array.isArray(kept)) kept.push(listener);
  else slots[event] = [kept as E[K], listener];
}

/** Removes `listener` for `event` once, the one added last, as EventEmitter's `off` does. */
export function removeListener<E, K extends keyof E>(slots: ListenerSlots<E>, event: K, listener: E[K]): void {
  const kept = slots[event];
  if (kept === listener) {
    delete slots[event];
    return;
  }
  if (!Array.isArray(kept)) return;
  const at = kept.lastIndexOf(listener);
  if (at < 0) return;
  kept.splice(at, 1);
  if (kept.length === 1) slots[event] = kept[0];
}

/**
 * The listeners of `event` when called, in the order added: a copy, so that listeners added or
 * removed while they are called change the next emit only, as with EventEmitter.
 */
export function listenersOf<E, K extends keyof E>(slots: ListenerSlots<E>, event: K): ReadonlyArray<E[K]> {
  const kept = slots[event];
  if (kept === undefined) return [];
  return Array.isArray(kept) ? [...kept] : [kept as E[K]];
}
