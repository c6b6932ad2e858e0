import debug from 'debug';
import {
  abortReason,
  ChildrenWatch,
  isRetryableError,
  isZkError,
  joinPath,
  NodeWatch,
  raceAbort,
  StepLoop,
  validateClient,
  validateOptions,
  validateRecipePath,
  validateSignal,
  type ZkClient,
} from '../../src/recipeKit';
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
  /** Ends the observation: the iterator rejects with `signal.reason`, and its watches are removed. */
  signal?: AbortSignal;
}

/** The names both leader recipes sort by: LeaderLatch's 'latch-' and LeaderSelector's 'lock-'. */
const SORT_NAMES = [LEADER_LATCH_NAME, LEADER_SELECTOR_NAME] as const;

/**
 * Follows the leader of a LeaderLatch or LeaderSelector path without taking part, like etcd's
 * Election.Observe: for dashboards and followers that only need to know who leads. The iterator
 * yields the current leader first, then again each time the leader changes: `{ id, node }`, or
 * `undefined` while nobody takes part (or the path does not exist). It works for Curator's nodes
 * too.
 *
 * - **Cheap.** It watches only what can change the answer: the leader's node while there is a
 *   leader; the path's children (or its creation, while it is missing) only while there is none.
 *   Participants joining behind the leader cost the observer nothing.
 * - **The leader it reports** is the participant whose node sorts first. A LeaderLatch leads once it
 *   has checked that node (a moment later); a LeaderSelector once its `takeLeadership` starts.
 * - **SUSPENDED.** The last answer stands while disconnected; nothing is yielded until the
 *   connection is back. **RECONNECTED / LOST.** The watches read again (on LOST in the new session),
 *   and the observer yields only if the leader changed meanwhile.
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
  return observe(client, path, options);
}

async function* observe(client: ZkClient, path: string, options: ObserveLeaderOptions): AsyncGenerator<LeaderInfo | undefined, void, undefined> {
  // Checked on the first next(), which rejects: a generator's body runs only then.
  validateRecipePath(validateClient(client, 'observeLeader'), path, 'leader');
  const signal = validateSignal(validateOptions(options, 'options').signal);
  const observer = new Observer(client, path);
  try {
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      const change = await raceAbort(observer.next(), signal);
      log('%s: leader %s (session %s)', path, change?.node ?? 'none', client.session ?? '-');
      yield change;
    }
  } finally {
    await observer.close();
  }
}

/** Keeps the watches that can change the answer, and hands out each new answer once. */
class Observer {
  private readonly loop: StepLoop;
  private headWatch: NodeWatch | undefined;
  private childrenWatch: ChildrenWatch | undefined;
  /** The node last handed out; null for "no leader"; undefined before the first. */
  private last: string | null | undefined;
  private pending: { value: LeaderInfo | undefined } | undefined;
  private failure: unknown;
  private wake: (() => void) | undefined;

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
  ) {
    this.loop = new StepLoop(() => this.step(), {
      onError: (err) => {
        if (isRetryableError(err)) return log('%s: looking for the leader failed, again later: %s', path, String(err));
        this.failure = err;
        this.loop.stop();
        this.wake?.();
      },
    });
    this.loop.kick();
  }

  /** The next leader that differs from the last one handed out. */
  async next(): Promise<LeaderInfo | undefined> {
    while (this.pending === undefined) {
      if (this.failure !== undefined) throw this.failure;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
    const { value } = this.pending;
    this.pending = undefined;
    return value;
  }

  async close(): Promise<void> {
    this.loop.stop();
    await Promise.all([this.headWatch?.close(), this.childrenWatch?.close()]);
  }

  private async step(): Promise<void> {
    const leader = await this.look();
    if (leader === 'again') return this.loop.kick();
    const key = leader === null ? null : leader.node;
    if (key === this.last) return;
    this.last = key;
    this.pending = { value: leader ?? undefined };
    this.wake?.();
  }

  /** The leader now, or null for none; 'again' when what we saw changed under us. */
  private async look(): Promise<LeaderInfo | null | 'again'> {
    let nodes = sortLockNodes(await this.children(), SORT_NAMES);
    if (nodes.length === 0) {
      // Nobody leads: now the children matter (and the path's creation, while it is missing).
      this.childrenWatch ??= new ChildrenWatch(this.client, this.path, () => this.loop.kick());
      nodes = sortLockNodes((await this.childrenWatch.start())?.children ?? [], SORT_NAMES);
      if (nodes.length === 0) return null;
    }
    // Somebody leads: joins behind it change nothing.
    void this.childrenWatch?.close();
    this.childrenWatch = undefined;
    const head = joinPath(this.path, nodes[0]);
    if (this.headWatch?.path !== head || this.headWatch.isClosed) {
      void this.headWatch?.close();
      this.headWatch = new NodeWatch(this.client, head, () => this.loop.kick(), { creation: false, onEnd: () => this.loop.kick() });
    }
    const node = this.headWatch.value === undefined ? await this.headWatch.start() : this.headWatch.value;
    return node === null ? 'again' : { id: node.data.toString('utf8'), node: head };
  }

  private async children(): Promise<string[]> {
    try {
      return await this.client.getChildren(this.path);
    } catch (err) {
      if (isZkError(err, 'NONODE')) return [];
      throw err;
    }
  }
}
