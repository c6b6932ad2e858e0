import debug from 'debug';
import {
  type CreatedAndListed,
  type Deadline,
  type PreparedCreate,
  deferred,
  deleteOwnNode,
  InvalidArgumentError,
  isRetryableError,
  isSessionEndedError,
  isZkError,
  joinPath,
  nodeName,
  NodeWatch,
  raceAbort,
  type Session,
  type Stat,
  type ZkClient,
} from '../../src/recipeKit';
import { AttemptScope } from './AttemptScope';
import { OwnNode } from './OwnNode';
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
   * Whether the fencing token is our own node's czxid, or else the parent's pzxid read when we
   * won. The czxid serves a lock where a node created later never sorts before an earlier one
   * (FIFO, one holder): each holder's node is younger than the last one's. It comes with the
   * create (create2), which lets a waiter claim on the deletion event alone. The read-write lock's
   * downgrade breaks the argument (its read node is younger than the writers queued behind it).
   */
  readonly tokenFromOwnNode: boolean;
}

/** Curator's standard driver: the first `maxLeases` nodes hold; the others each watch the node `maxLeases` places ahead. */
export function standardDriver(lockName: string, maxLeases = 1): LockDriver {
  return {
    lockName,
    sortNames: [lockName],
    relistOnWake: false,
    tokenFromOwnNode: maxLeases === 1,
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
   * Strictly increasing from holder to holder, also when the parent is reaped and re-created
   * (zxids only grow). For the mutex, our node's czxid: a node created later never sorts before an
   * earlier one, so each holder's node is younger than the last holder's. For the read-write lock,
   * the parent's pzxid (the zxid of its latest child change) as seen by a read that proved we hold:
   * the next holder can only prove it after our node's deletion, whose zxid is larger than anything
   * we saw.
   */
  readonly fencingToken: bigint;
  /** The session that created the node: its owner. */
  readonly session: Session;
  /** The watch on our node the wait set, when it did: the lease's monitor takes it over. */
  readonly own?: OwnNode;
}

/** The node an attempt creates instead of the driver's: a name to protect, and its mode. */
export interface NodeToCreate {
  readonly name: string;
  readonly mode: 'EPHEMERAL' | 'EPHEMERAL_SEQUENTIAL';
}

export interface AttemptOptions {
  /**
   * Waiting (behind holders, for a connection) ends by this deadline; the attempt's own round trips
   * on a live connection may run past it, within `attemptTimeoutMs` (see AttemptScope).
   */
  deadline: Deadline;
  /** How long a run of round trips may go past the deadline on a live connection; default 0: none. */
  attemptTimeoutMs?: number;
  /** Whether to wait for the holders ahead of us; false: a try, which resolves undefined at once when the lock is taken. */
  wait: boolean;
  signal?: AbortSignal;
  /** Our node's data. */
  data?: Buffer | string;
  /**
   * Another node than the driver's (the read-write lock's downgrade: a read node at the sequence of
   * the write node held). A non-sequential name must already end in a sequence after one of
   * `sortNames`.
   */
  node?: NodeToCreate;
}

type WaitOutcome = Acquisition | 'busy' | 'vanished';

/** A listing of the lock's parent, as much of it as a decision needs. */
interface Listing {
  children: readonly string[];
  pzxid: bigint;
}

/**
 * Our node as the wait knows it. `listing` is the one the create came with: the wait takes it out
 * once it knows its place, so that a waiter keeps its node and the one it watches, not the listing
 * (every waiter decodes its own: kept for the whole wait, they grow with the square of the queue).
 */
interface Created {
  readonly path: string;
  readonly session: Session;
  /** Our node's czxid, when the create returned its stat. */
  readonly czxid: bigint | undefined;
  listing: Listing | undefined;
}

function toCreated(c: CreatedAndListed): Created {
  return { path: c.path, session: c.session, czxid: c.stat?.czxid, listing: { children: c.children, pzxid: c.parentStat.pzxid } };
}

/**
 * The lock algorithm every lock shares, like Curator's LockInternals. Each contender creates a
 * protected EPHEMERAL_SEQUENTIAL node under `basePath`; the driver decides who holds and what each
 * waiter watches (with getData, never exists). A waiter wakes only when the node it waits for goes.
 *
 * Time limits hold: every request of an attempt carries a signal that aborts at the deadline, or,
 * for the attempt's own round trips on a live connection, within `attemptTimeoutMs` past it. So an
 * attempt ends by then whatever the network does, waits for a connection included.
 */
export class LockInternals {
  /** The create of the driver's own node with the data last asked for: checked once, not on every attempt. */
  private driverCreate: { data: Buffer | string | undefined; create: PreparedCreate } | undefined;

  constructor(
    readonly client: ZkClient,
    readonly basePath: string,
    readonly driver: LockDriver,
  ) {}

  /**
   * Tries to win the lock. Resolves undefined when the deadline passes (or, without `wait`, when
   * the lock is taken); rejects with the signal's reason on abort, or with the error that stopped
   * it. On every way out but success, our node is deleted (guaranteed: retried in the background
   * if the connection is down). Connection problems are ridden out until the deadline when there
   * is one; without one, the client's retry policy decides.
   */
  async attempt(options: AttemptOptions): Promise<Acquisition | undefined> {
    const node = this.nodeToCreate(options.node);
    const scope = new AttemptScope(this.client, options.deadline, options.attemptTimeoutMs ?? 0, options.signal);
    try {
      for (;;) {
        const create = this.prepareCreate(options.node === undefined ? undefined : node, options.data);
        const created = await this.untilDeadline(scope, () =>
          this.client
            .createAndListParent(create.request.path, { mode: node.mode, protected: true, createParents: 'container', data: options.data, signal: scope.signal }, create)
            .then(toCreated),
        );
        let outcome: WaitOutcome;
        try {
          outcome = await this.waitForLock(created, options.wait, scope);
        } catch (err) {
          // Within what is left of the deadline; past it, in the background.
          await this.deleteOurNode(created.path, scope.signal);
          throw err;
        }
        if (outcome === 'busy') {
          await this.deleteOurNode(created.path, scope.signal);
          return undefined;
        }
        if (outcome === 'vanished') {
          // Our node went with our session (or never was ours): start again with a new one.
          log('%s: node %s of session %s vanished; trying again', this.basePath, created.path, created.session);
          await this.deleteOurNode(created.path, scope.signal);
          continue;
        }
        return outcome;
      }
    } catch (err) {
      if (scope.isTimeout(err)) return undefined;
      throw err;
    } finally {
      scope.dispose();
    }
  }

  /** Our node's create, checked by the client (bad data throws here, before any I/O); `custom`: another node than the driver's. */
  private prepareCreate(custom: NodeToCreate | undefined, data: Buffer | string | undefined): PreparedCreate {
    const made = custom === undefined ? this.driverCreate : undefined;
    if (made !== undefined && made.data === data) return made.create;
    const node = custom ?? this.nodeToCreate(undefined);
    const create = this.client.prepareCreate(joinPath(this.basePath, node.name), { mode: node.mode, protected: true, createParents: 'container', data });
    if (custom === undefined) this.driverCreate = { data, create };
    return create;
  }

  private nodeToCreate(custom: NodeToCreate | undefined): NodeToCreate {
    if (custom === undefined) return { name: this.driver.lockName, mode: 'EPHEMERAL_SEQUENTIAL' };
    // A node that does not sort would never be found among the children: the attempt would loop.
    if (custom.mode !== 'EPHEMERAL_SEQUENTIAL' && sortLockNodes([custom.name], this.driver.sortNames).length === 0) {
      throw new InvalidArgumentError(`a lock node must end in a sequence after one of ${this.driver.sortNames.join(', ')}: ${custom.name}`, {
        path: this.basePath,
      });
    }
    return custom;
  }

  /**
   * Runs `op`; with a finite deadline, a connection problem the client's retry policy gave up on is
   * tried again once connected, until the deadline (which aborts the scope's signal).
   */
  private async untilDeadline<T>(scope: AttemptScope, op: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await op();
      } catch (err) {
        if (!scope.deadline.isFinite || !isRetryableError(err) || isSessionEndedError(err)) throw err;
        log('%s: %s; trying again once connected, until the deadline', this.basePath, (err as Error).message);
        await scope.waiting(() => this.client.blockUntilConnected({ signal: scope.signal }));
      }
    }
  }

  /** Deletes our node, guaranteed (see deleteOwnNode): waiting for the server at most until `within` aborts. */
  deleteOurNode(node: string, within: AbortSignal | undefined): Promise<void> {
    return deleteOwnNode(this.client, node, within);
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
  private async waitForLock(created: Created, wait: boolean, scope: AttemptScope): Promise<WaitOutcome> {
    try {
      return await this.waitInSession(created, wait, scope);
    } catch (err) {
      if (isSessionEndedError(err)) return 'vanished';
      throw err;
    }
  }

  private async waitInSession(created: Created, wait: boolean, scope: AttemptScope): Promise<WaitOutcome> {
    const { path: ours, session } = created;
    const ourName = nodeName(ours);
    const { tokenFromOwnNode } = this.driver;
    // Our node's czxid comes with the create on transports that have create2; otherwise a read
    // gives it once we win.
    let ownCzxid = created.czxid;
    /** The watch on our own node, while we wait for a claim that needs no read. */
    let own: OwnNode | undefined;
    /** A read of our own node made while waiting, for its czxid. */
    let ownStat: Promise<Stat | null> | undefined;
    let listing = created.listing;
    created.listing = undefined;
    // The generator of an async function keeps every local, dead or not, while it waits: what
    // must not outlive a decision is reassigned, never held in a local of its own.
    let before: readonly string[] | undefined = [];
    let parentToken: bigint | undefined;
    let won = false;

    try {
      for (;;) {
        if (listing) {
          before = this.nodesBefore(listing, ourName);
          parentToken = listing.pzxid;
          listing = undefined;
        }
        // A listing made after our create in our session misses our node only if that session
        // has ended since, or someone deleted the node.
        if (before === undefined) return 'vanished';
        const decision = this.driver.decide(before, ourName);
        if (decision.holds) {
          if (!this.client.isConnectionTrusted && this.client.isConnected) {
            // This process stalled since what settled the win was read (see isConnectionTrusted):
            // the node ahead may have gone with a session that outlived ours. A listing in our
            // session, sent now, is answered only if our session still stands.
            listing = await this.list(session, scope);
            continue;
          }
          if (tokenFromOwnNode) {
            if (own?.gone) return 'vanished';
            if (ownCzxid === undefined) {
              // One small read in our node's session proves it stands, and gives its czxid.
              const stat = await this.untilDeadline(scope, () => this.client.exists(ours, { session, signal: scope.signal }));
              if (stat === null || stat.ephemeralOwner !== session.id) return 'vanished';
              ownCzxid = stat.czxid;
            }
            won = true;
            return { node: ours, fencingToken: ownCzxid, session, own };
          }
          if (parentToken !== undefined) {
            won = true;
            return { node: ours, fencingToken: parentToken, session };
          }
          if (this.driver.relistOnWake) {
            listing = await this.list(session, scope);
            continue;
          }
          const parent = await this.untilDeadline(scope, () => this.client.exists(this.basePath, { session, signal: scope.signal }));
          if (parent === null) return 'vanished';
          parentToken = parent.pzxid;
          continue;
        }
        if (!wait) return 'busy';
        const lastAhead = before.length === 1;
        // What the wait keeps of the listing: the nodes still ahead once the watched one goes,
        // when that settles the win; otherwise nothing, and the wake-up lists again.
        const settled = this.settledOnWake(before, decision.watch, ourName);
        before = settled ?? [];
        if (tokenFromOwnNode && lastAhead) {
          // The node ahead is the last one: its deletion alone can settle the win, with no read,
          // once we also watch our own node (events come in zxid order over our session, so a
          // deletion of our node, or the end of the session, would reach us first). The watch's
          // first read gives our czxid, if the create did not.
          own ??= new OwnNode(this.client, ours, session);
        } else if (tokenFromOwnNode && ownCzxid === undefined) {
          // Our czxid is needed when we win: read it now, beside the watch of the node ahead,
          // rather than on the way to the lock.
          ownStat ??= this.client.exists(ours, { session, signal: scope.signal });
          ownStat.catch(() => undefined);
        }
        // Waiting behind a holder, the watch's reads included: past the deadline it ends at once.
        const gone = await scope.waiting(() => this.untilDeadline(scope, () => this.waitForDeletion(joinPath(this.basePath, decision.watch), session, scope, own)));
        ownCzxid ??= own?.watch.value?.stat.czxid ?? (ownStat ? await settledCzxid(ownStat) : undefined);
        if (gone === 'vanished') return 'vanished';
        if (gone === 'missing') {
          // Gone already: what we knew is stale, so learn it all again in one read rather than
          // probing the nodes we knew one by one.
          listing = await this.list(session, scope);
          continue;
        }
        parentToken = undefined;
        // Settled when it was the last node ahead of us; otherwise the nodes we knew of may
        // have gone too (in a drain they all have), so one listing beats probing each.
        if (settled === undefined) listing = await this.list(session, scope);
      }
    } finally {
      if (!won) void own?.watch.close();
    }
  }

  /**
   * Watches `node` (getData, never exists: exists on a missing node leaves a watch that never
   * fires) until it is deleted. 'missing' when it is gone already; 'vanished' when our own node
   * (watched through `own`, read beside it the first time) goes first. Rejects with a
   * SessionLostError when our session ends, and with the scope's reason at the deadline (the
   * watch is then removed).
   */
  private async waitForDeletion(node: string, session: Session, scope: AttemptScope, own: OwnNode | undefined): Promise<'deleted' | 'missing' | 'vanished'> {
    const gone = deferred<'deleted' | 'vanished'>();
    const ended = deferred<never>();
    const watch = new NodeWatch(
      this.client,
      node,
      (value) => {
        if (value === null) gone.resolve('deleted');
      },
      {
        session,
        creation: false,
        signal: scope.signal,
        onEnd: (reason) => ended.reject(reason),
      },
    );
    ended.promise.catch(() => undefined);
    own?.listen((value) => value === null && gone.resolve('vanished'));
    try {
      const [ahead] = await Promise.all([watch.start(), own?.watch.start()]);
      if (own?.gone) return 'vanished';
      if (ahead === null) return 'missing';
      const outcome = await raceAbort(Promise.race([gone.promise, ended.promise]), scope.signal);
      // Our node's deletion would have come first; a claim needs it still standing.
      return own?.gone ? 'vanished' : outcome;
    } finally {
      // Not awaited: taking the watch off the server is a round trip that a dead connection
      // holds until its read timeout, past the deadline. It goes in the background.
      void watch.close();
    }
  }

  /** The lock nodes before ours in `listing`, in lock order; undefined when ours is not in it. */
  private nodesBefore(listing: Listing, ourName: string): string[] | undefined {
    const sorted = sortLockNodes(listing.children, this.driver.sortNames);
    const at = sorted.indexOf(ourName);
    return at < 0 ? undefined : sorted.slice(0, at);
  }

  /**
   * The nodes still ahead of ours once `watched` goes, when the driver holds with them without a
   * new listing; undefined when the wake-up must list again.
   */
  private settledOnWake(before: readonly string[], watched: string, ourName: string): string[] | undefined {
    if (this.driver.relistOnWake) return undefined;
    const rest = before.filter((n) => n !== watched);
    return this.driver.decide(rest, ourName).holds ? rest : undefined;
  }

  private async list(session: Session, scope: AttemptScope): Promise<Listing> {
    try {
      const { children, stat } = await this.untilDeadline(scope, () => this.client.getChildrenWithStat(this.basePath, { session, signal: scope.signal }));
      return { children, pzxid: stat.pzxid };
    } catch (err) {
      // The parent is gone, and our node with it.
      if (isZkError(err, 'NONODE')) return { children: [], pzxid: 0n };
      throw err;
    }
  }
}

/** The czxid a read of our node found; undefined when it failed or found nothing (the win reads again). */
async function settledCzxid(read: Promise<Stat | null>): Promise<bigint | undefined> {
  try {
    return (await read)?.czxid;
  } catch {
    return undefined;
  }
}
