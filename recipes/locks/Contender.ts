import {
  type CreatedAndListed,
  type PreparedCreate,
  deleteOwnNode,
  type DeletionListener,
  DeletionWait,
  isZkError,
  NodeWatch,
  type Session,
  type Stat,
  type ZkClient,
} from '../../src/recipeKit';
import { HandOffMarkReader } from './handOffMark';
import { isHere, listenHeld } from './localHandOff';
import { OwnNode } from './OwnNode';
import { lockNodesBefore } from './sequence';

/** A listing of the line's parent, as much of it as a decision needs. */
export interface Listing {
  readonly children: readonly string[];
  /** The parent's pzxid when the listing was made: the zxid of its latest child change. */
  readonly pzxid: bigint;
}

/** How a wait for the node ahead ended: 'handedOff' when it was deleted after it was seen to hold (see handOffMark.ts). */
export type AheadOutcome = 'deleted' | 'handedOff' | 'missing' | 'vanished';

/** How a wait ends when our own node goes first: not an error, never seen outside `untilGone`. */
const VANISHED = Symbol('vanished');

/** How `Contender.untilGone` waits. */
export interface UntilGoneOptions {
  /** The node ahead may mark itself once it holds (see handOffMark.ts). */
  readonly handOff?: boolean;
  /** A deletion that is not a hand-off will be followed by a listing: send it at once. */
  readonly relist?: boolean;
}

/** What a contender creates to join the line. */
export interface JoinOptions {
  /** EPHEMERAL_SEQUENTIAL (the line's own nodes), or EPHEMERAL for a name that already ends in a sequence. */
  readonly mode: 'EPHEMERAL' | 'EPHEMERAL_SEQUENTIAL';
  readonly data?: Buffer | string;
  readonly signal?: AbortSignal;
}

/**
 * One contender's place in a line of sequential nodes under one parent: the core that the mutex
 * family, the read-write lock, the semaphores (through their internal mutex) and LeaderLatch share,
 * as Curator's LockInternals is for its locks. What each recipe decides (who holds, which node to
 * watch) stays with it; what is the same for all is written here once:
 *
 * - **Our node**, protected EPHEMERAL_SEQUENTIAL under container parents, created with the parent's
 *   listing in one round trip, and pinned to the session that created it: every read about it is
 *   made in that session, so that what a later session says (a listing, a watch) is never taken as
 *   evidence about a node that went with the earlier one.
 * - **Our place**: the nodes that sort before ours in a listing.
 * - **The node ahead**, watched with getData (never exists, which leaves a watch on a missing node
 *   that never fires) until it is deleted; our own node watched beside it when a deletion is to
 *   settle first place with no read, since events come in zxid order over our session and the loss
 *   of our node or session would reach us first.
 * - **Proof that a node is ours**: it stands and its ephemeralOwner is our session.
 * - **A claim without a read** only while the connection is trusted (see
 *   `ZkClient.isConnectionTrusted`): after a stall, a read in our session must answer first.
 * - **Leaving**: our node deleted, guaranteed (retried in the background while the session lives).
 *
 * A contender keeps its node's path, session and czxid, and the watches it set: never a listing,
 * so that a waiter costs the same at any depth of the line (a listing sent as the node ahead goes
 * is held only until the wake-up that asked for it takes it).
 */
export class Contender {
  /** The watch on our own node, once one is set. */
  private ownNode: OwnNode | undefined;
  /** The listing `untilGone` sent when the node ahead went, for the next `list()`. */
  private early: Promise<Listing> | undefined;
  /** Our node's name, without the parent. */
  readonly name: string;

  private constructor(
    private readonly client: ZkClient,
    /** The line's parent. */
    readonly parent: string,
    /** Our node's full path (within the client's namespace). */
    readonly path: string,
    /** The session that created our node: its owner. */
    readonly session: Session,
    /** Our node's czxid, when the create returned its stat (create2); else read with our node's watch. */
    private createdCzxid: bigint | undefined,
  ) {
    // A path the server gave our create: valid, so no check again.
    this.name = path.slice(path.lastIndexOf('/') + 1);
  }

  /**
   * Creates our node at `node` (a protected name; sequential unless `mode` says otherwise) under
   * container parents, and lists the parent in the same round trip. `node` may be a create the
   * client checked once (`ZkClient.prepareCreate`, with the same mode and data), so that a recipe
   * that joins again and again is not checked again each time. The listing is handed back, not
   * kept.
   */
  static async join(client: ZkClient, parent: string, node: string | PreparedCreate, options: JoinOptions): Promise<{ contender: Contender; listing: Listing }> {
    const path = typeof node === 'string' ? node : node.request.path;
    const created: CreatedAndListed = await client.createAndListParent(
      path,
      { mode: options.mode, protected: true, createParents: 'container', data: options.data, signal: options.signal },
      typeof node === 'string' ? undefined : node,
    );
    return {
      contender: new Contender(client, parent, created.path, created.session, created.stat?.czxid),
      listing: { children: created.children, pzxid: created.parentStat.pzxid },
    };
  }

  /** Our node's czxid, once known: from the create, or from our node's watch. */
  get czxid(): bigint | undefined {
    return this.createdCzxid ?? this.ownNode?.watch.value?.stat.czxid;
  }

  /** The watch on our own node, if one is set. */
  get own(): OwnNode | undefined {
    return this.ownNode;
  }

  /** Whether our node is known to be gone, or its watch ended with its session. */
  get ownGone(): boolean {
    return this.ownNode?.gone ?? false;
  }

  /** Whether `stat` is of a node that stands in our session. */
  isOurs(stat: Stat | null | undefined): boolean {
    return stat !== null && stat !== undefined && stat.ephemeralOwner === this.session.id;
  }

  /**
   * The nodes that sort before ours in `children`, in line order; undefined when ours is not among
   * them (it went with its session, or someone deleted it).
   */
  placeIn(children: readonly string[], sortNames: readonly string[]): string[] | undefined {
    return lockNodesBefore(children, sortNames, this.name);
  }

  /**
   * Lists the parent in our node's session; a missing parent lists nothing (our node went with it).
   * The first call after `untilGone` with `relist` takes the listing it sent when the node ahead
   * went, if it sent one.
   */
  list(signal: AbortSignal | undefined): Promise<Listing> {
    const early = this.early;
    this.early = undefined;
    return early ?? this.listNow(signal);
  }

  private async listNow(signal: AbortSignal | undefined): Promise<Listing> {
    try {
      const { children, stat } = await this.client.getChildrenOfBuilt(this.parent, this.session, signal);
      return { children, pzxid: stat.pzxid };
    } catch (err) {
      if (isZkError(err, 'NONODE')) return { children: [], pzxid: 0n };
      throw err;
    }
  }

  /**
   * Watches our own node in its session, once: its first read (beside the next request, in the same
   * round trip) proves it ours and gives its czxid; its deletion, or the end of its session, is heard.
   */
  watchOwn(): OwnNode {
    this.ownNode ??= new OwnNode(this.client, this.path, this.session);
    return this.ownNode;
  }

  /** Reads our node in its session: whether it stands and is ours (a claim with no watch on it reads this way). */
  async readOwn(signal: AbortSignal | undefined): Promise<Stat | null> {
    const stat = await this.client.existsOfBuilt(this.path, this.session, signal);
    if (stat !== null) this.createdCzxid ??= stat.czxid;
    return stat;
  }

  /**
   * Whether a first place settled by events alone (the node ahead deleted, our node still watched)
   * may be claimed with no read now: the connection is trusted. Otherwise this process stalled
   * since the events were read, and the node ahead may have gone with a session that outlived ours:
   * a read in our session, sent now, must answer first.
   */
  get mayClaimOnEvents(): boolean {
    return this.client.isConnectionTrusted;
  }

  /**
   * Watches the node `ahead` (a name under the parent) until it is deleted. 'missing' when it is
   * gone already; 'vanished' when our own node goes first (when watched: see `watchOwn`). With
   * `handOff`, the first change of the node ahead starts the watch on our own node, beside the
   * read that checks whether the change is the hand-off mark (see handOffMark.ts), and so does
   * word that the node ahead was won in this process (see localHandOff.ts); once a read has shown
   * the mark, or the word came, the deletion is 'handedOff': the node ahead held, so nothing is
   * left before ours. With `relist`, a deletion that is not 'handedOff' (and 'missing' in any case) is
   * to be followed by a listing: it is sent from the handler that heard of it, and the next
   * `list()` takes it. Rejects with a SessionLostError when our session ends, and with the
   * signal's reason on abort (the watch is then removed, in the background).
   */
  async untilGone(ahead: string, signal: AbortSignal | undefined, { handOff = false, relist = false }: UntilGoneOptions = {}): Promise<AheadOutcome> {
    const mark = handOff ? new HandOffMarkReader() : undefined;
    const aheadPath = this.pathOf(ahead);
    let ownRead: Promise<unknown> | undefined;
    let wait: DeletionWait;
    const guardOwnOnce = () => {
      ownRead ??= this.guardOwn(wait);
    };
    // Where a mark may come, the first change of the node ahead (the mark, as a rule: a mark is
    // only ever seen by the read that follows a change) starts the watch on our own node, beside
    // the read that checks the change: once that read shows the mark, the deletion is claimed
    // with no read left to wait for.
    const listener: DeletionListener = {
      onRead: mark && ((data, stat) => mark.read(data, stat)),
      onChange: mark && guardOwnOnce,
      onGone: (outcome) => {
        if (outcome === 'missing' || (relist && !handedOff(mark, ownRead))) this.sendEarly(signal);
      },
    };
    // A node ahead of this process may be won here: then our own node is watched from the start,
    // in the same write as the node ahead, so that the word of the win leaves nothing to read.
    if (mark && this.ownNode === undefined && isHere(this.client, aheadPath)) this.watchOwn();
    if (this.ownNode === undefined) {
      wait = new DeletionWait(this.client, aheadPath, this.session, signal, listener);
    } else {
      // Our own node's watch, read beside the node ahead in the same write: its loss ends the wait.
      [wait, ownRead] = this.client.batch(() => {
        const started = new DeletionWait(this.client, aheadPath, this.session, signal, listener);
        return [started, this.guardOwn(started)] as const;
      });
    }
    // The node ahead won in this process (see localHandOff.ts): as good as its mark, with no read.
    // A node ahead that starts to wait here only now (the line formed at once) starts our own
    // node's watch then, long before its win, as if it had stood here from the start of our wait.
    const stopListening =
      mark &&
      listenHeld(
        this.client,
        aheadPath,
        () => {
          mark.heldHere();
          guardOwnOnce();
        },
        guardOwnOnce,
      );
    let outcome: AheadOutcome;
    try {
      outcome = await wait.done;
      if (ownRead !== undefined) {
        // A claim needs our node still standing, as its watch's first read and the events since
        // say: its deletion would have come first.
        await ownRead;
        if (this.ownGone) outcome = 'vanished';
        else if (outcome === 'deleted' && handedOff(mark, ownRead)) outcome = 'handedOff';
      }
    } catch (err) {
      this.early = undefined;
      if (err === VANISHED) return 'vanished';
      throw err;
    } finally {
      stopListening?.();
    }
    // A listing sent early serves only the wake-up that follows.
    if (outcome === 'vanished' || outcome === 'handedOff') this.early = undefined;
    return outcome;
  }

  /** Sends the listing the wake-up will ask for (see `untilGone`); a failure is met by the `list()` that takes it. */
  private sendEarly(signal: AbortSignal | undefined): void {
    const early = this.listNow(signal);
    early.catch(() => undefined);
    this.early = early;
  }

  /** Watches our own node (see `watchOwn`) for the length of `wait`, which its loss ends; resolves once its first read has answered. */
  private guardOwn(wait: DeletionWait): Promise<unknown> {
    const own = this.watchOwn();
    const read = own.watch.start();
    own.listen((value) => value === null && wait.fail(VANISHED));
    read.then(
      () => own.gone && wait.fail(VANISHED),
      (err: unknown) => wait.fail(err),
    );
    return read;
  }

  /**
   * Watches the node `ahead` (a name under the parent) in our session, with getData: `onDeleted`
   * runs once it is deleted; `onEnd` when the watch ends otherwise (our session ended, or `signal`
   * aborted). `start()` resolves null when it is missing already. For a contender that reacts to
   * events rather than awaiting them (the latch).
   */
  watchAhead(ahead: string, onDeleted: () => void, onEnd: (reason: unknown) => void, signal: AbortSignal | undefined): NodeWatch {
    return new NodeWatch(this.client, this.pathOf(ahead), (value) => value === null && onDeleted(), {
      session: this.session,
      creation: false,
      signal,
      onEnd,
      // Whether it stands is all we ask: its bytes as stored, compressed by its owner or not.
      compressed: false,
    });
  }

  /** The path of `name` under the parent. A name from a listing of the parent: the reads check the path made. */
  private pathOf(name: string): string {
    return `${this.parent === '/' ? '' : this.parent}/${name}`;
  }

  /** Stops watching our own node (the lease's monitor, having taken it over, keeps it). */
  dropOwnWatch(): void {
    const own = this.ownNode;
    this.ownNode = undefined;
    void own?.watch.close();
  }

  /** Deletes our node, guaranteed (see deleteOwnNode): waiting for the server at most until `within` aborts. */
  leave(within?: AbortSignal): Promise<void> {
    return deleteOwnNode(this.client, this.path, within);
  }
}

/**
 * Whether the node ahead held: a read showed its hand-off mark, with our own node watched (a claim
 * on its deletion needs both).
 */
function handedOff(mark: HandOffMarkReader | undefined, ownRead: Promise<unknown> | undefined): boolean {
  return mark?.marked === true && ownRead !== undefined;
}
