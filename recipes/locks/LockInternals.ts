import debug from 'debug';
import {
  type Deadline,
  type PreparedCreate,
  InvalidArgumentError,
  isRetryableError,
  isSessionEndedError,
  isZkError,
  joinPath,
  type Session,
  type Stat,
  type ZkClient,
} from '../../src/recipeKit';
import { AttemptScope } from './AttemptScope';
import { Contender, type Listing } from './Contender';
import { writeHandOffMark } from './handOffMark';
import { standsHere, tellHeld } from './localHandOff';
import type { OwnNode } from './OwnNode';
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
  /**
   * Whether the lock has one holder and each waiter watches the node just ahead of it, so that a
   * holder may mark its node and the waiter behind it take the lock on that node's deletion with
   * no listing (see handOffMark.ts).
   */
  readonly handOff: boolean;
}

/** Curator's standard driver: the first `maxLeases` nodes hold; the others each watch the node `maxLeases` places ahead. */
export function standardDriver(lockName: string, maxLeases = 1): LockDriver {
  return {
    lockName,
    sortNames: [lockName],
    relistOnWake: false,
    tokenFromOwnNode: maxLeases === 1,
    handOff: maxLeases === 1,
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
  /** Whether another node held or waited ahead of ours: the lock is contended. */
  readonly waited: boolean;
  /** Whether the waiter behind our node is in this process and knows we hold: it needs no hand-off mark (see localHandOff.ts). */
  readonly toldHere?: boolean;
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

/**
 * The listing our create came with, in a box the wait empties once it knows its place: a waiter
 * keeps its node and the one it watches, not the listing (every waiter decodes its own: kept for
 * the whole wait, they grow with the square of the queue; a suspended async function keeps its
 * parameters alive, so the listing must not be one).
 */
interface FirstListing {
  listing: Listing | undefined;
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
  /** The driver's own node, as every attempt without another node creates it. */
  private driverNode: NodeToCreate | undefined;

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
        // The join's result is the listing's box: the wait empties it.
        const joined: { readonly contender: Contender } & FirstListing = await this.untilDeadline(scope, () =>
          Contender.join(this.client, this.basePath, create, { mode: node.mode, data: options.data, signal: scope.signal }),
        );
        const { contender } = joined;
        let outcome: WaitOutcome;
        try {
          outcome = this.wonAlone(contender, joined) ?? (await this.waitForLock(contender, joined, options.wait, scope));
        } catch (err) {
          // Within what is left of the deadline; past it, in the background.
          await contender.leave(scope.signal);
          throw err;
        }
        if (outcome === 'busy') {
          await contender.leave(scope.signal);
          return undefined;
        }
        if (outcome === 'vanished') {
          // Our node went with our session (or never was ours): start again with a new one.
          log('%s: node %s of session %s vanished; trying again', this.basePath, contender.path, contender.session);
          await contender.leave(scope.signal);
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
    if (custom === undefined) return (this.driverNode ??= { name: this.driver.lockName, mode: 'EPHEMERAL_SEQUENTIAL' });
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
   * tried again once connected, until the deadline (which aborts the scope's signal). With none,
   * `op` is all there is: no frame of its own around it.
   */
  private untilDeadline<T>(scope: AttemptScope, op: () => Promise<T>): Promise<T> {
    return scope.deadline.isFinite ? this.retriedUntilDeadline(scope, op) : op();
  }

  private async retriedUntilDeadline<T>(scope: AttemptScope, op: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await op();
      } catch (err) {
        if (!isRetryableError(err) || isSessionEndedError(err)) throw err;
        log('%s: %s; trying again once connected, until the deadline', this.basePath, (err as Error).message);
        await scope.waiting(() => this.client.blockUntilConnected({ signal: scope.signal }));
      }
    }
  }

  /**
   * Writes the hand-off mark on `node`, held (see handOffMark.ts): its data again, as created.
   * For a driver with `handOff`, which the caller checks before it schedules the mark.
   */
  markHeld(node: string): void {
    const made = this.driverCreate;
    if (made !== undefined) writeHandOffMark(this.client, node, made.create);
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
   * The lock, won at once, when the listing our create came with holds our node alone and the
   * connection is trusted: nothing is ahead, and the token is known (most uncontended acquires).
   * Then no wait is set up, and the box is emptied; otherwise undefined, and `waitForLock` decides.
   */
  private wonAlone(contender: Contender, first: FirstListing): Acquisition | undefined {
    const listing = first.listing;
    if (listing === undefined || listing.children.length !== 1 || listing.children[0] !== contender.name || !contender.mayClaimOnEvents) return undefined;
    const token = this.driver.tokenFromOwnNode ? contender.czxid : listing.pzxid;
    if (token === undefined || contender.ownGone || !this.driver.decide([], contender.name).holds) return undefined;
    first.listing = undefined;
    return this.won(contender, token, false);
  }

  /** Our node holds, proven by `fencingToken`: a waiter of this process behind it takes the lock on its deletion, with no listing. */
  private won(contender: Contender, fencingToken: bigint, waited: boolean): Acquisition {
    const toldHere = this.driver.handOff && this.client.isConnectionTrusted && tellHeld(this.client, contender.path);
    return { node: contender.path, fencingToken, session: contender.session, own: contender.own, waited, toldHere };
  }

  /**
   * Waits until our node holds. Every read is pinned to the session that created our node: what
   * a read in a later session says (a listing, the parent's pzxid, a watch) is no evidence about a
   * node that went with the earlier one, so a session change ends the wait as 'vanished'.
   */
  private async waitForLock(contender: Contender, first: FirstListing, wait: boolean, scope: AttemptScope): Promise<WaitOutcome> {
    const { driver } = this;
    const { tokenFromOwnNode } = driver;
    const ourName = contender.name;
    /** A read of our own node made while waiting, for its czxid. */
    let ownStat: Promise<Stat | null> | undefined;
    let listing = first.listing;
    first.listing = undefined;
    // The generator of an async function keeps every local, dead or not, while it waits: what
    // must not outlive a decision is reassigned, never held in a local of its own.
    let before: readonly string[] | undefined = [];
    let parentToken: bigint | undefined;
    let won = false;
    let waited = false;
    /** Ends our stand in this process's line (see localHandOff.ts), once we wait. */
    let leaveLine: (() => void) | undefined;

    try {
      for (;;) {
        if (listing) {
          before = contender.placeIn(listing.children, driver.sortNames);
          parentToken = listing.pzxid;
          listing = undefined;
        }
        // A listing made after our create in our session misses our node only if that session
        // has ended since, or someone deleted the node.
        if (before === undefined) return 'vanished';
        const decision = driver.decide(before, ourName);
        if (decision.holds) {
          if (!contender.mayClaimOnEvents && this.client.isConnected) {
            listing = await this.list(contender, scope);
            continue;
          }
          if (tokenFromOwnNode) {
            if (contender.ownGone) return 'vanished';
            let czxid = contender.czxid ?? (ownStat ? await settledCzxid(ownStat) : undefined);
            if (czxid === undefined) {
              // One small read in our node's session proves it stands, and gives its czxid.
              const stat = await this.untilDeadline(scope, () => contender.readOwn(scope.signal));
              if (!contender.isOurs(stat)) return 'vanished';
              czxid = (stat as Stat).czxid;
            }
            won = true;
            return this.won(contender, czxid, waited);
          }
          if (parentToken !== undefined) {
            won = true;
            return this.won(contender, parentToken, waited);
          }
          if (driver.relistOnWake) {
            listing = await this.list(contender, scope);
            continue;
          }
          const parent = await this.untilDeadline(scope, () => this.client.exists(this.basePath, { session: contender.session, signal: scope.signal }));
          if (parent === null) return 'vanished';
          parentToken = parent.pzxid;
          continue;
        }
        if (!wait) return 'busy';
        const lastAhead = before.length === 1;
        // What the wait keeps of the listing: the nodes still ahead once the watched one goes,
        // when that settles the win; otherwise nothing, and the wake-up lists again.
        const settled = this.settledOnWake(before, decision.watch, ourName);
        // Further back, the node just ahead may mark itself once it holds (see handOffMark.ts):
        // its deletion then settles the win too.
        const handOff = driver.handOff && settled === undefined && decision.watch === before[before.length - 1];
        before = settled ?? [];
        if (tokenFromOwnNode && lastAhead) {
          // The node ahead is the last one: its deletion alone can settle the win, with no read,
          // once we also watch our own node. The watch's first read gives our czxid, if the create
          // did not.
          contender.watchOwn();
        } else if (tokenFromOwnNode && contender.czxid === undefined) {
          // Our czxid is needed when we win: read it now, beside the watch of the node ahead,
          // rather than on the way to the lock.
          ownStat ??= contender.readOwn(scope.signal);
          ownStat.catch(() => undefined);
        }
        waited = true;
        // While we wait, a waiter of this process behind our node may prepare for our win (see
        // localHandOff.ts). A node that wins at once needs none: the node behind it is then the
        // last one ahead of its own, which settles the win on its deletion anyway.
        if (driver.handOff) leaveLine ??= standsHere(this.client, contender.path);
        // Waiting behind a holder, the watch's reads included: past the deadline it ends at once.
        const gone = await scope.waiting(() => this.untilDeadline(scope, () => contender.untilGone(decision.watch, scope.signal, { handOff, relist: settled === undefined })));
        if (gone === 'vanished') return 'vanished';
        if (gone === 'missing') {
          // Gone already: what we knew is stale, so learn it all again in one read rather than
          // probing the nodes we knew one by one.
          listing = await this.list(contender, scope);
          continue;
        }
        parentToken = undefined;
        // Settled when it was the last node ahead of us, or held (marked: nothing is left ahead);
        // otherwise the nodes we knew of may have gone too (in a drain they all have), so one
        // listing beats probing each.
        if (settled === undefined && gone !== 'handedOff') listing = await this.list(contender, scope);
      }
    } catch (err) {
      if (isSessionEndedError(err)) return 'vanished';
      throw err;
    } finally {
      leaveLine?.();
      if (!won) contender.dropOwnWatch();
    }
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

  private list(contender: Contender, scope: AttemptScope): Promise<Listing> {
    return this.untilDeadline(scope, () => contender.list(scope.signal));
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
