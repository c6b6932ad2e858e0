/** The waits of the barriers: for a node to come or go, bounded by a deadline and a signal. */
import {
  abortReason,
  Deadline,
  DeadlineScope,
  type NodeData,
  NodeWatch,
  validateOptions,
  validateSignal,
  validateTimeout,
  type ZkClient,
} from '../../src/recipeKit';
import { BarrierTimeoutError } from './errors';

/** Options of a barrier wait. */
export interface BarrierWaitOptions {
  /** Reject with BarrierTimeoutError after this long; undefined waits as long as it takes. */
  timeoutMs?: number;
  /** Abort the wait: it rejects with `signal.reason`. */
  signal?: AbortSignal;
}

/**
 * Checks a wait's options and runs `body` with a signal that aborts at the deadline or with the
 * caller's signal; the deadline's abort becomes a BarrierTimeoutError naming `what`.
 */
export async function boundedWait<T>(options: BarrierWaitOptions | undefined, what: string, path: string, body: (scope: DeadlineScope) => Promise<T>): Promise<T> {
  const o = validateOptions(options, 'options');
  const timeoutMs = validateTimeout(o.timeoutMs, 'timeoutMs');
  const signal = validateSignal(o.signal);
  if (signal?.aborted) throw abortReason(signal);
  const timeout = new BarrierTimeoutError(`${what} at ${path} did not finish within ${timeoutMs} ms`, { path });
  const scope = new DeadlineScope(Deadline.after(timeoutMs), signal, timeout);
  try {
    return await body(scope);
  } catch (err) {
    if (scope.timedOut && (err === timeout || err === scope.signal.reason)) throw timeout;
    throw err;
  } finally {
    scope.dispose();
  }
}

/**
 * Resolves once the node at `path` is `want` ('present' or 'gone'), watching it (NodeWatch: one
 * read, then a watch; read again after a reconnect that could not keep the watch, or in a new
 * session). Rejects with the signal's reason when it aborts, and with a read's error when the
 * first read fails.
 */
export function nodeBecomes(client: ZkClient, path: string, want: 'present' | 'gone', signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      void watch.close();
      outcome();
    };
    // The watch hears of the signal only through its reads: an idle watch is ended here.
    const onAbort = () => settle(() => reject(signal.reason));
    const seen = (value: NodeData | null | undefined) => {
      if (value !== undefined && (value === null) === (want === 'gone')) settle(resolve);
    };
    const watch = new NodeWatch(client, path, (value) => seen(value), {
      signal,
      // Waiting for a node to go: once it is gone there is nothing more to watch.
      creation: want === 'present',
      onEnd: (reason) => settle(() => reject(reason)),
      // Only whether it stands: its bytes as stored, whoever wrote them.
      compressed: false,
    });
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    watch.start().then(seen, (err: unknown) => settle(() => reject(err)));
  });
}
