import debug from 'debug';
import {
  type ConnectionState,
  deleteOwnNodeWithin,
  type LockRecipe,
  metrics,
  type NodeData,
  NodeWatch,
  type Session,
  startClock,
  type ZkClient,
} from '../../src/recipeKit';
import { LockLostError, type LockLostReason } from './errors';
import { heldLocksOf, type HeldLocks, type WatchedHold } from './HeldLocks';
import { RELEASE_WAIT_MS } from './InterProcessLock';
import type { OwnNode } from './OwnNode';

const log = debug('zk-recipes:locks:monitor');

/** What another party writes into a holder's node to ask it to let go (Curator's Revoker). */
export const REVOKE_MESSAGE = '__REVOKE__';

/**
 * Watches one held lock and aborts its signal, with a LockLostError, the moment the lock can no
 * longer be trusted: the session ends (LOST, or the client closed); the connection is SUSPENDED
 * under the 'standard' error policy; our node is deleted or turns out to belong to another
 * session. State changes and the session's end cost a hold no listener of its own (the client's
 * HeldLocks tells every hold); the node is watched only once someone asks for the signal, or when
 * the lock is revocable, so an uncontended acquire and release costs no extra request; a waiter's
 * watch on its own node is taken over as it is (or let go before the holder's hand-off mark, if
 * nobody listens by then). Lost, it removes its watch; released, it aborts with 'RELEASED' and
 * lets the node's deletion end it.
 */
export class LockMonitor implements WatchedHold {
  /** Made when someone asks for the signal: a hold nobody listens to costs no signal and no error. */
  private controller: AbortController | undefined;
  /** Why the lock can no longer be trusted (or was released); undefined while it holds. */
  private lostAs: { reason: LockLostReason; cause: unknown } | undefined;
  /** Where the hold is watched from, until it is lost or released; undefined when it was lost from the start. */
  private held: HeldLocks | undefined;
  private watch: NodeWatch | undefined;
  /** When the hold began, for the hold-time metric; 0 while not handed out, or when nobody listened then. */
  private heldSince = 0;
  private heldAs: { recipe: LockRecipe; path: string } | undefined;

  constructor(
    private readonly client: ZkClient,
    readonly node: string,
    readonly session: Session,
    private readonly onRevoke?: () => void,
    /** The watch on the node the waiter already has, to take over instead of reading again. */
    private own?: OwnNode,
  ) {
    if (session.isEnded) this.onSessionEnd();
    // Not connected, or this process stalled since the read that proved the win (see isConnectionTrusted).
    else if (client.state !== undefined && !client.isConnectionTrusted && client.isErrorState('SUSPENDED')) this.lose('SUSPENDED');
    else {
      this.held = heldLocksOf(client);
      this.held.join(this);
    }
    if (onRevoke) this.watchNode();
  }

  /** Aborted with a LockLostError when the lock can no longer be trusted. */
  get signal(): AbortSignal {
    this.watchNode();
    if (this.controller === undefined) {
      this.controller = new AbortController();
      this.abortIfLost();
    }
    return this.controller.signal;
  }

  /** Whether the lock can no longer be trusted (or was released). Asking does not start the node's watch. */
  get isLost(): boolean {
    return this.lostAs !== undefined;
  }

  /** The lease was handed out: the hold begins (for the lock-hold metric). */
  handedOut(recipe: LockRecipe, path: string): void {
    this.heldSince = startClock(metrics.lockHold);
    this.heldAs = { recipe, path };
  }

  /**
   * Lets the waiter's watch on our node go, if nobody has asked for the signal and the lock is not
   * revocable: before a write of ours to the node (the hand-off mark), whose event would only make
   * that watch read the node again. Whoever asks for the signal later starts a watch, with a read.
   */
  letOwnWatchGo(): void {
    if (this.watch !== undefined || this.own === undefined) return;
    this.own.watch.detach();
    this.own = undefined;
  }

  /** The lock was released: the signal aborts with 'RELEASED', and the node is no longer watched. */
  release(): void {
    this.lose('RELEASED');
  }

  /**
   * Releases the lock (see `release`) and deletes our node, guaranteed (see deleteOwnNodeWithin):
   * resolves once the server confirms, or after RELEASE_WAIT_MS. The delete is written first, the
   * monitor's bookkeeping after it: nothing in this process can tell the order (no reply or event
   * is read before this code ends), and the next holder waits on the delete alone. After a hold
   * this code runs cold, about twice as slowly as in a tight loop, so what comes before the write
   * is what the next holder waits for.
   */
  releaseAndDelete(): Promise<void> {
    const deleting = deleteOwnNodeWithin(this.client, this.node, RELEASE_WAIT_MS);
    this.release();
    return deleting;
  }

  /** Told by HeldLocks: the client moved to `state`. */
  onState(state: ConnectionState): void {
    // LOST comes through the session's end too; this is for SUSPENDED under 'standard'.
    if (this.client.isErrorState(state)) this.lose(state as LockLostReason);
  }

  /** Told by HeldLocks: the hold's session ended. */
  onSessionEnd(): void {
    this.lose(this.session.closedByClient ? 'CLIENT_CLOSED' : 'LOST', this.session.endReason);
  }

  private lose(reason: LockLostReason, cause?: unknown): void {
    if (this.lostAs) return;
    this.lostAs = { reason, cause };
    this.held?.leave(this);
    this.held = undefined;
    // Released, the node is deleted next: that ends the server's watch without a request of ours.
    const watch = this.watch ?? this.own?.watch;
    if (reason === 'RELEASED') watch?.detach();
    else void watch?.close();
    if (reason !== 'RELEASED') log('lock node %s lost: %s (session %s)', this.node, reason, this.session);
    this.abortIfLost();
    if (this.heldSince > 0 && this.heldAs && metrics.lockHold.hasSubscribers) {
      const outcome = reason === 'RELEASED' ? 'released' : 'lost';
      metrics.lockHold.publish({ ...this.heldAs, node: this.node, holdMs: performance.now() - this.heldSince, outcome, reason: outcome === 'lost' ? reason : undefined });
    }
  }

  /** Aborts the signal, if anyone has asked for it, once the lock is lost. */
  private abortIfLost(): void {
    if (this.controller && this.lostAs) this.controller.abort(new LockLostError(this.lostAs.reason, { path: this.node, cause: this.lostAs.cause }));
  }

  /** Watches our own node, in its session: its deletion is a loss, and `__REVOKE__` in it asks us to let go. */
  private watchNode(): void {
    if (this.watch !== undefined || this.lostAs) return;
    const check = (node: NodeData | null) => {
      if (node === null) return this.lose('NODE_DELETED');
      if (node.stat.ephemeralOwner !== this.session.id) return this.lose('NOT_OUR_NODE');
      if (this.onRevoke && node.data.toString('utf8') === REVOKE_MESSAGE) {
        try {
          this.onRevoke();
        } catch (err) {
          log('revocation listener for %s threw: %O', this.node, err);
        }
      }
    };
    if (this.own) {
      this.watch = this.own.watch;
      this.own.listen(check);
      return;
    }
    this.watch = new NodeWatch(this.client, this.node, check, {
      session: this.session,
      creation: false,
      onError: (err) => log('watching lock node %s: %s', this.node, String(err)),
    });
    this.watch.start().then(check, (err: unknown) => log('watching lock node %s failed: %s', this.node, String(err)));
  }
}
