/**
 * A signal that aborts when any of `parents` does, with its reason, or when the returned `abort`
 * is called. (AbortSignal.any does the same from Node 20.3, but kept every signal it was given
 * alive in the Node 20 lines before 20.16; this holds only what it is given.)
 */
export function linkedSignal(parents: readonly AbortSignal[]): { signal: AbortSignal; abort(reason: unknown): void } {
  const controller = new AbortController();
  const abort = (reason: unknown) => {
    if (controller.signal.aborted) return;
    for (const parent of parents) parent.removeEventListener('abort', onParent);
    controller.abort(reason);
  };
  function onParent(this: AbortSignal): void {
    abort(this.reason);
  }
  for (const parent of parents) {
    if (parent.aborted) {
      abort(parent.reason);
      break;
    }
    parent.addEventListener('abort', onParent, { once: true });
  }
  return { signal: controller.signal, abort };
}
