import debug from 'debug';
import { subscribe } from '../../src/util/events';
import type { ZkClient } from '../../src/client/ZkClient';
import { isZkError } from '../../src/errors';
import { joinPath, validatePath } from '../../src/paths';
import { isRetryableError } from '../../src/retry';
import { abortReason } from '../../src/util/async';
import { validateOptions, validateSignal } from '../../src/validate';
import { sortLockNodes } from '../locks/sequence';
import { LEADER_LATCH_NAME, LEADER_SELECTOR_NAME } from './participants';

const log = debug('zk-recipes:leader:observe');

/** A leader as an observer sees it: its id (its node's data as UTF-8) and its node's full path. */
export interface LeaderInfo {
  readonly id: string;
  readonly node: string;
}

/** Options of `observeLeader`. */
export interface ObserveLeaderOptions {
  /** Ends the observation: the iterator rejects with `signal.reason`, and its watches are left to fire unheeded. */
  signal?: AbortSignal;
}

/** The names both leader recipes sort by: LeaderLatch's 'latch-' and LeaderSelector's 'lock-'. */
const SORT_NAMES = [LEADER_LATCH_NAME, LEADER_SELECTOR_NAME] as const;
/** How long to wait before looking again after a failed look while nothing else happens. */
const RETRY_MS = 1_000;

const CHILDREN = '\0children';
const CREATION = '\0creation';

/**
 * Follows the leader of a LeaderLatch or LeaderSelector path without taking part, like etcd's
 * Election.Observe: for dashboards and followers that only need to know who leads. The iterator
 * yields the current leader first, then again each time the leader changes: `{ id, node }`, or
 * `undefined` while nobody takes part (or the path does not exist). It works for Curator's nodes
 * too.
 *
 * - **Cheap.** It watches only what can change the answer: the leader's node (getData) while there
 *   is a leader; the path's children only while there is none; the path's creation while it is
 *   missing. Participants joining behind the leader cost the observer nothing.
 * - **The leader it reports** is the participant whose node sorts first. A LeaderLatch leads once it
 *   has checked that node (a moment later); a LeaderSelector once its `takeLeadership` starts.
 * - **SUSPENDED.** The last answer stands while disconnected; nothing is yielded until the
 *   connection is back. **RECONNECTED / LOST.** The observer looks again (on LOST its watches went
 *   with the session) and yields only if the leader changed meanwhile.
 * - Stop it with `signal` (or by leaving a `for await` loop). Errors other than connection
 *   problems, such as a closed client, end the iteration by rejecting.
 *
 * @example
 * ```ts
 * const stop = new AbortController();
 * for await (const leader of observeLeader(client, '/services/billing/leader', { signal: stop.signal })) {
 *   dashboard.show(leader ? leader.id : 'no leader');
 * }
 * ```
 */
export function observeLeader(client: ZkClient, path: string, options: ObserveLeaderOptions = {}): AsyncGenerator<LeaderInfo | undefined, void, undefined> {
  const validPath = validatePath(path);
  const signal = validateSignal(validateOptions(options, 'options').signal);
  return observe(client, validPath, signal);
}

async function* observe(client: ZkClient, path: string, signal: AbortSignal | undefined): AsyncGenerator<LeaderInfo | undefined, void, undefined> {
  /** What we have a watch outstanding on (in the current session): node paths, CHILDREN, CREATION. */
  const watching = new Set<string>();
  let kicked = false;
  let wake: (() => void) | undefined;
  const kick = () => {
    kicked = true;
    wake?.();
  };
  const watcher = (key: string) => () => {
    watching.delete(key);
    kick();
  };
  const stopStates = subscribe(client, 'stateChanged', (state) => {
    if (state !== 'SUSPENDED') kick();
  });

  const children = async (watch: boolean): Promise<string[]> => {
    const fresh = watch && !watching.has(CHILDREN);
    if (fresh) watching.add(CHILDREN);
    try {
      return await client.getChildren(path, { watcher: fresh ? watcher(CHILDREN) : undefined, signal });
    } catch (err) {
      if (fresh) watching.delete(CHILDREN);
      if (!isZkError(err, 'NONODE')) throw err;
      if (watch && !watching.has(CREATION)) {
        // exists (unlike getChildren) leaves a watch on a missing node, which fires when it is created.
        watching.add(CREATION);
        try {
          if ((await client.exists(path, { watcher: watcher(CREATION), signal })) !== null) kick();
        } catch (e) {
          watching.delete(CREATION);
          throw e;
        }
      }
      return [];
    }
  };

  /** The leader now, or null for none; 'again' when what we saw changed under us. */
  const look = async (): Promise<LeaderInfo | null | 'again'> => {
    let nodes = sortLockNodes(await children(false), SORT_NAMES);
    if (nodes.length === 0) {
      // Nobody leads: now the children matter. The watched listing may already show someone.
      nodes = sortLockNodes(await children(true), SORT_NAMES);
      if (nodes.length === 0) return null;
    }
    const head = joinPath(path, nodes[0]);
    const fresh = !watching.has(head);
    if (fresh) watching.add(head);
    try {
      // getData, not exists: exists on a missing node leaves a watch that never fires.
      const { data } = await client.getData(head, { watcher: fresh ? watcher(head) : undefined, signal });
      return { id: data.toString('utf8'), node: head };
    } catch (err) {
      if (fresh) watching.delete(head);
      if (isZkError(err, 'NONODE')) return 'again';
      throw err;
    }
  };

  const nextKick = (timeoutMs?: number): Promise<void> => {
    if (kicked) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const finish = (settle: () => void) => {
        wake = undefined;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        settle();
      };
      const onAbort = () => finish(() => reject(abortReason(signal as AbortSignal)));
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => finish(resolve), timeoutMs);
      wake = () => finish(resolve);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  };

  /** The node last yielded; null for "no leader"; undefined before the first yield. */
  let last: string | null | undefined;
  try {
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      kicked = false;
      let seen: LeaderInfo | null | 'again';
      try {
        seen = await look();
      } catch (err) {
        if (signal?.aborted) throw abortReason(signal);
        if (!isRetryableError(err)) throw err;
        log('%s: looking for the leader failed (session 0x%s), again when connected: %s', path, client.sessionId.toString(16), String(err));
        await nextKick(RETRY_MS);
        continue;
      }
      if (seen === 'again') continue;
      const key = seen === null ? null : seen.node;
      if (key !== last) {
        last = key;
        log('%s: leader %s (session 0x%s)', path, key ?? 'none', client.sessionId.toString(16));
        yield seen ?? undefined;
      }
      await nextKick();
    }
  } finally {
    stopStates();
    wake = undefined;
  }
}
