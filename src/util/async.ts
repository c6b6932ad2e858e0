/** Small promise helpers shared by the client and the recipes. */
import { startTimer } from './timers';

/** The reason an aborted signal carries, as an Error. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Resolves after `ms` (however large), or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      cancel();
      reject(abortReason(signal as AbortSignal));
    };
    const cancel = startTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Settles like `promise`, or rejects with the signal's reason when it aborts first. The promise
 * itself goes on; `onLate` sees its outcome when the abort won, so the caller can undo its effect.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined, onLate?: (settled: PromiseSettledResult<T>) => void): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    promise.then(
      (value) => onLate?.({ status: 'fulfilled', value }),
      (reason: unknown) => onLate?.({ status: 'rejected', reason }),
    );
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (aborted) onLate?.({ status: 'fulfilled', value });
        else resolve(value);
      },
      (reason: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (aborted) onLate?.({ status: 'rejected', reason });
        else reject(reason);
      },
    );
  });
}

/** A promise with its resolve and reject, for waits settled from event handlers. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
