import debug from 'debug';
import { InvalidArgumentError, isZkError } from '../../src/errors';
import type { Session } from '../../src/client/Session';
import type { CreatedAndListed, ZkClient } from '../../src/client/ZkClient';
import { isSessionEndedError } from '../../src/retry';
import { joinPath, nodeName } from '../../src/paths';
import type { WatchEventType } from '../../src/transport/Transport';
import { abortReason, deferred } from '../../src/util/async';
import { sortLockNodes } from './sequence';

const log = debug('zk-recipes:locks');

/** What a driver decides for one contender. */
export type LockDecision = { holds: true } | { holds: false; watch: string };

/**
 * The strategy seam of the lock core, like Curator's LockInternalsDriver: what our node is called,
 * whether we hold the lock, and which node to watch.
 */
export interface LockDriver {
  /** The name in our node, after the protection prefix: 'lock-', '__READ__', '__WRIT__'. */
  readonly lockName: string;
  /** Every name whose nodes take part in the ordering under this parent. */
  readonly sortNames: readonly string[];
  /**
   * Whether we hold, given the nodes that sort before ours (those still alive, as far as we know),
   * or which of them to wait for.
   */
  decide(before: readonly string[], ours: string): LockDecision;
  /**
   * Whether a wake-up must list the children again before claiming the lock. A driver whose lock
   * can gain a node that sorts before existing waiters (the read-write lock's downgrade) needs it;
   * otherwise what a waiter already knows settles the question, since no node created after ours
   * can sort before ours.
   */
  readonly relistOnWake: boolean;
  /**
   * The node an attempt creates, asked in the acquiring context before each create: the name to
   * protect (`_c_<uuid>-` goes in front) and its mode. Undefined, or no hook: `lockName` with
   * EPHEMERAL_SEQUENTIAL. A non-sequential name must already end in a sequence after one of
   * `sortNames`. The read-write lock's downgrade uses it: the read node takes the sequence of the
   * write node its context holds, so that it sorts at the writer's place (CURATOR-621).
   */
  nodeToCreate?(): { name: string; mode: 'EPHEMERAL' | 'EPHEMERAL_SEQUENTIAL' } | undefined;
}

/** Curator's standard driver: the first `maxLeases` nodes hold; the others each watch the node `maxLeases` places ahead. */
export function standardDriver(lockName: string, maxLeases = 1): LockDriver {
  return {
    lockName,
    sortNames: [lockName],
    relistOnWake: false,
    decide(before) {
      return before.length < maxLeases ? { holds: true } : { holds: false, watch: before[before.length - maxLeases] };
    },
  };
}

/** A lock won: our node, and the fencing token proven while we held it. */
export interface Acquisition {
  /** Full path of our lock node (relative to the client's namespace). */
  readonly node: string;
  /**
   * The parent's pzxid (the zxid of its latest child change) as seen by a read that proved we
   * hold the lock. The next holder can only prove it after our node's deletion, whose zxid is
   * larger than anything we saw, so tokens strictly increase from holder to holder, also when the
   * parent is reaped and re-created (zxids only grow).
   */
  readonly fencingToken: bigint;
  /** The session that created the node: its owner. */
  readonly session: Session;
}

export interface AttemptOptions {
  /** Give up after this long: undefined waits forever, 0 never waits. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Our node's data. */
  data?: Buffer | string;
}

type WaitOutcome = Acquisition | 'timeout' | 'vanished';

/**
 * The lock algorithm every lock shares, like Curator's LockInternals. Each contender creates a
 * protected EPHEMERAL_SEQUENTIAL node under `basePath`; the driver decides who holds and what each
 * waiter watches (with getData, never exists). A waiter wakes only when the node it waits for goes.
 */
export class LockInternals {
  constructor(
    readonly client: ZkClient,
    readonly basePath: string,
    readonly driver: LockDriver,
  ) {}

  /**
   * Tries to win the lock. Resolves undefined when the time runs out; rejects with the signal's
   * reason on abort, or with the error that stopped it. On every way out but success, our node is
   * deleted (guaranteed: retried in the background if the connection is down).
   */
  async attempt(options: AttemptOptions = {}): Promise<Acquisition | undefined> {
    const { signal } = options;
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      const node = this.nodeToCreate();
      const created = await this.client.createAndListParent(joinPath(this.basePath, node.name), {
        mode: node.mode,
        protected: true,
        createParents: 'container',
        data: options.data,
        signal,
      });
      let outcome: WaitOutcome;
      try {
        outcome = await this.waitForLock(created, deadline, signal);
      } catch (err) {
        await this.deleteOurNode(created.path);
        throw err;
      }
      if (outcome === 'timeout') {
        await this.deleteOurNode(created.path);
        return undefined;
      }
      if (outcome === 'vanished') {
        // Our node went with our session (or never was ours): start again with a new one.
        log('%s: node %s of session 0x%s vanished; trying again', this.basePath, created.path, created.session.id.toString(16));
        await this.deleteOurNode(created.path);
        if (Date.now() >= deadline) return undefined;
        continue;
      }
      return outcome;
    }
  }

  private nodeToCreate(): { name: string; mode: 'EPHEMERAL' | 'EPHEMERAL_SEQUENTIAL' } {
    const custom = this.driver.nodeToCreate?.();
    if (custom === undefined) return { name: this.driver.lockName, mode: 'EPHEMERAL_SEQUENTIAL' };
    // A node that does not sort would never be found among the children: the attempt would loop.
    if (custom.mode !== 'EPHEMERAL_SEQUENTIAL' && sortLockNodes([custom.name], this.driver.sortNames).length === 0) {
      throw new InvalidArgumentError(`a lock node must end in a sequence after one of ${this.driver.sortNames.join(', ')}: ${custom.name}`, {
        path: this.basePath,
      });
    }
    return custom;
  }

  /** Deletes our node, guaranteed: a connection problem leaves the delete to the background. */
  async deleteOurNode(node: string): Promise<void> {
    try {
      await this.client.delete(node, { guaranteed: true, quietly: true });
    } catch (err) {
      log('%s: deleting %s failed, left to the background: %s', this.basePath, node, String(err));
    }
  }

  /** Lock nodes in lock order, as full paths. */
  async getParticipantNodes(): Promise<string[]> {
    try {
      const children = await this.client.getChildren(this.basePath);
      return sortLockNodes(children, this.driver.sortNames).map((c) => joinPath(this.basePath, c));
    } catch (err) {
      if (isZkError(err, 'NONODE')) return [];
      throw err;
    }
  }

  /**
   * Waits until our node holds. Every read is pinned to the session that created our node: what
   * a read in a later session says (a listing, the parent's pzxid, a watch) is no evidence about a
   * node that went with the earlier one, so a session change ends the wait as 'vanished'.
   */
  private async waitForLock(created: CreatedAndListed, deadline: number, signal: AbortSignal | undefined): Promise<WaitOutcome> {
    try {
      return await this.waitInSession(created, deadline, signal);
    } catch (err) {
      if (isSessionEndedError(err)) return 'vanished';
      throw err;
    }
  }

  private async waitInSession(created: CreatedAndListed, deadline: number, signal: AbortSignal | undefined): Promise<WaitOutcome> {
    const { path: ours, session } = created;
    const ourName = nodeName(ours);
    let listing: { children: readonly string[]; pzxid: bigint } | undefined = { children: created.children, pzxid: created.parentStat.pzxid };
    let before: string[] = [];
    let token: bigint | undefined;

    for (;;) {
      if (listing) {
        const sorted = sortLockNodes(listing.children, this.driver.sortNames);
        const at = sorted.indexOf(ourName);
        // A listing made after our create in our session misses our node only if that session
        // has ended since, or someone deleted the node.
        if (at < 0) return 'vanished';
        before = sorted.slice(0, at);
        token = listing.pzxid;
        listing = undefined;
      }
      const decision = this.driver.decide(before, ourName);
      if (decision.holds) {
        if (token !== undefined) return { node: ours, fencingToken: token, session };
        if (this.driver.relistOnWake) {
          listing = await this.list(session, signal);
          continue;
        }
        // What we know settles it: no node created after ours sorts before ours. One small read
        // in our node's session proves the parent still stands and gives the token.
        const parent = await this.client.exists(this.basePath, { session, signal });
        if (parent === null) return 'vanished';
        token = parent.pzxid;
        continue;
      }

      if (Date.now() >= deadline) return 'timeout';
      const watched = joinPath(this.basePath, decision.watch);
      const woke = deferred<WatchEventType>();
      try {
        // getData, not exists: exists on a missing node leaves a watch that never fires.
        await this.client.getData(watched, { watcher: (event) => woke.resolve(event.type), session, signal });
      } catch (err) {
        if (!isZkError(err, 'NONODE')) throw err;
        // Gone already: what we knew is stale, so learn it all again in one read rather than
        // probing the nodes we knew one by one.
        listing = await this.list(session, signal);
        continue;
      }
      const event = await this.waitForEvent(woke.promise, deadline, signal);
      if (event === 'timeout') return 'timeout';
      if (event === 'deleted') {
        before = before.filter((n) => n !== decision.watch);
        token = undefined;
        // Settled when it was the last node ahead of us; otherwise the nodes we knew of may
        // have gone too (in a drain they all have), so one listing beats probing each.
        if (this.driver.relistOnWake || !this.driver.decide(before, ourName).holds) listing = await this.list(session, signal);
      } else if (event === 'sessionLost') {
        // Our node's session ended: the node went with it, or is on its way out.
        return 'vanished';
      }
      // Any other event (the watched node's data changed) just means: watch it again.
    }
  }

  private async list(session: Session, signal: AbortSignal | undefined): Promise<{ children: readonly string[]; pzxid: bigint }> {
    try {
      const { children, stat } = await this.client.getChildrenWithStat(this.basePath, { session, signal });
      return { children, pzxid: stat.pzxid };
    } catch (err) {
      // The parent is gone, and our node with it.
      if (isZkError(err, 'NONODE')) return { children: [], pzxid: 0n };
      throw err;
    }
  }

  private waitForEvent(event: Promise<WatchEventType>, deadline: number, signal: AbortSignal | undefined): Promise<WatchEventType | 'timeout'> {
    return new Promise((resolve, reject) => {
      const timer = Number.isFinite(deadline) ? setTimeout(() => finish(() => resolve('timeout')), Math.max(0, deadline - Date.now())) : undefined;
      const onAbort = () => finish(() => reject(abortReason(signal as AbortSignal)));
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        settle();
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      event.then((type) => finish(() => resolve(type)));
    });
  }
}
