import { randomUUID } from 'node:crypto';
import debug from 'debug';
import {
  IllegalStateError,
  isZkError,
  joinPath,
  NodeWatch,
  type Session,
  validateClient,
  validatePositiveInt,
  validateRecipePath,
  type ZkClient,
} from '../../src/recipeKit';
import { boundedWait, nodeBecomes, type BarrierWaitOptions } from './waits';

const log = debug('zk-recipes:barriers:double');

/** The name of the node that opens a double barrier, as Curator names it. */
export const READY_NODE = 'ready';

/**
 * A double barrier, wire-compatible with Curator's DistributedDoubleBarrier: members `enter()`
 * and wait until `memberQty` have, do their work, then `leave()` and wait until all have left.
 * Each member is an EPHEMERAL node `<path>/<uuid>` (parents as containers); the member that
 * completes the count creates the persistent `<path>/ready` node, which lets everyone in; the
 * last to leave deletes it. Curator's members on the same path take part. `memberQty` is a
 * threshold, not a limit: more members may enter.
 *
 * - **Entering** re-checks the condition after every wake-up (GH-1290: Curator 5.4 lets a
 *   spurious wake-up through): it passes only once `ready` exists or the members present reach
 *   `memberQty`. It watches `ready` only.
 * - **Leaving** follows Curator: the lowest member (by name) waits for the highest to go; every
 *   other member deletes its node and waits for the lowest to go; when no member is left, `ready`
 *   is deleted.
 * - **SUSPENDED.** Waits ride through it: the client retries, and watches are set again after a
 *   reconnect that could not keep them.
 * - **LOST.** Our member node goes with the session. While entering, the member joins again with a
 *   new node in the next session and keeps waiting (it passes if `ready` was created meanwhile).
 *   While leaving, it counts as having left, and keeps waiting for the others. (Curator throws a
 *   connection loss on any disconnect while entering, and, while leaving, stops waiting.)
 * - A wait that runs out of time rejects with BarrierTimeoutError; an `enter` that does not pass
 *   deletes our node again (Curator's leaves it).
 *
 * @example
 * ```ts
 * const barrier = new DistributedDoubleBarrier(client, '/jobs/batch-7', 5);
 * await barrier.enter({ timeoutMs: 60_000 });   // until five members have entered
 * await doMyPart();
 * await barrier.leave({ timeoutMs: 60_000 });   // until all of them have left
 * ```
 */
export class DistributedDoubleBarrier {
  readonly client: ZkClient;
  readonly path: string;
  readonly memberQty: number;
  /** Our member node: `<path>/<uuid>`, the same for each enter of this object (as in Curator). */
  readonly ourPath: string;
  readonly readyPath: string;
  private state: 'OUT' | 'ENTERING' | 'IN' | 'LEAVING' = 'OUT';
  /** The session our member node was created in, while it exists. */
  private nodeSession: Session | undefined;

  constructor(client: ZkClient, barrierPath: string, memberQty: number) {
    this.client = validateClient(client, 'DistributedDoubleBarrier');
    this.path = validateRecipePath(this.client, barrierPath, 'double barrier');
    this.memberQty = validatePositiveInt(memberQty, 'memberQty', { min: 1, max: 2 ** 31 - 1 });
    this.ourPath = joinPath(this.path, randomUUID());
    this.readyPath = joinPath(this.path, READY_NODE);
    this.client.validateCreate(this.ourPath, { mode: 'EPHEMERAL', createParents: 'container' });
  }

  /** Whether this member has entered and not left. */
  get isEntered(): boolean {
    return this.state === 'IN';
  }

  /**
   * Enters: creates our member node, then waits until `memberQty` members have entered (or the
   * barrier is open already). Rejects with BarrierTimeoutError when `timeoutMs` passes first, with
   * `signal.reason` on abort (our node is then deleted), and with IllegalStateError when this
   * member has entered already.
   */
  async enter(options?: BarrierWaitOptions): Promise<void> {
    await boundedWait(options, 'entering the double barrier', this.path, async (scope) => {
      if (this.state !== 'OUT') throw new IllegalStateError(`this member of the double barrier is ${this.state}: leave() first`, { path: this.path });
      this.state = 'ENTERING';
      try {
        while (!(await this.tryEnter(scope.signal)));
        this.state = 'IN';
        log('%s: entered as %s', this.path, this.ourPath);
      } catch (err) {
        this.state = 'OUT';
        await this.deleteOurNode(undefined).catch(() => undefined);
        throw err;
      }
    });
  }

  /**
   * Leaves: deletes our member node and waits until every member has left (Curator's order: the
   * lowest member leaves last). Rejects with BarrierTimeoutError when `timeoutMs` passes first,
   * with `signal.reason` on abort, with IllegalStateError when this member has not entered, or
   * when our node was deleted by someone else, or another member's node is left alone on the path.
   */
  async leave(options?: BarrierWaitOptions): Promise<void> {
    await boundedWait(options, 'leaving the double barrier', this.path, async (scope) => {
      if (this.state !== 'IN') throw new IllegalStateError(`this member of the double barrier is ${this.state}: enter() first`, { path: this.path });
      this.state = 'LEAVING';
      try {
        await this.leaveSteps(scope.signal);
        this.state = 'OUT';
        log('%s: left (%s)', this.path, this.ourPath);
      } finally {
        if (this.state === 'LEAVING') this.state = this.ourNodeLives ? 'IN' : 'OUT';
      }
    });
  }

  // ---------------------------------------------------------------- entering

  /** One look: true when we may pass; otherwise it waits for a reason to look again. */
  private async tryEnter(signal: AbortSignal): Promise<boolean> {
    const look = new AbortController();
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    const onAbort = () => {
      look.abort(signal.reason);
      wake();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // `ready` is watched before anything else, so its creation from now on wakes us.
    const ready = new NodeWatch(this.client, this.readyPath, (value) => value !== null && wake(), { signal: look.signal, onEnd: () => wake(), compressed: false });
    try {
      const readyAtFirst = (await ready.start()) !== null;
      const member = await this.ensureOurNode(signal);
      if (readyAtFirst) return true;
      const children = member.children ?? (await this.listMembers(signal));
      // Our node went while we looked (with its session, and the container with it): join again.
      if (children === undefined || member.session.isEnded) return false;
      if (children.length >= this.memberQty) {
        try {
          await this.client.create(this.readyPath, { signal });
          log('%s: %d members of %d: ready', this.path, children.length, this.memberQty);
        } catch (err) {
          if (isZkError(err, 'NONODE')) {
            this.nodeSession = undefined;
            return false;
          }
          if (!isZkError(err, 'NODEEXISTS')) throw err;
        }
        return true;
      }
      // Wait for `ready`, or for our node's session to end (then we join again).
      member.session.signal.addEventListener('abort', () => wake(), { once: true, signal: look.signal });
      await woken;
      if (signal.aborted) throw signal.reason;
      return false;
    } finally {
      signal.removeEventListener('abort', onAbort);
      look.abort();
      await ready.close();
    }
  }

  /**
   * Our member node in the current session: created if needed. Resolves with its session and,
   * when it was just created, the members listed right behind the create.
   */
  private async ensureOurNode(signal: AbortSignal): Promise<{ session: Session; children?: string[] }> {
    const known = this.nodeSession;
    if (known !== undefined && !known.isEnded) return { session: known };
    this.nodeSession = undefined;
    for (;;) {
      try {
        const created = await this.client.createAndListParent(this.ourPath, { mode: 'EPHEMERAL', createParents: 'container', signal });
        this.nodeSession = created.session;
        log('%s: member %s created (session %s)', this.path, this.ourPath, created.session);
        return { session: created.session, children: created.children };
      } catch (err) {
        if (!isZkError(err, 'NODEEXISTS')) throw err;
      }
      // Made by an attempt whose reply was lost, or left by our previous session, which the
      // server has not expired yet: then wait for it to go.
      const session = this.client.session;
      const stat = await this.client.exists(this.ourPath, { signal });
      if (stat !== null && session !== undefined && stat.ephemeralOwner === session.id && !session.isEnded) {
        this.nodeSession = session;
        return { session };
      }
      if (stat !== null) await nodeBecomes(this.client, this.ourPath, 'gone', signal);
    }
  }

  /**
   * The barrier's children, or undefined when the barrier node is gone: then so is our node (its
   * session ended and the server reaped the empty container, or someone deleted the barrier), and
   * it is forgotten, to be created again.
   */
  private async listMembers(signal: AbortSignal): Promise<string[] | undefined> {
    try {
      return await this.client.getChildren(this.path, { signal });
    } catch (err) {
      if (!isZkError(err, 'NONODE')) throw err;
      this.nodeSession = undefined;
      return undefined;
    }
  }

  // ---------------------------------------------------------------- leaving

  private get ourNodeLives(): boolean {
    return this.nodeSession !== undefined && !this.nodeSession.isEnded;
  }

  private async leaveSteps(signal: AbortSignal): Promise<void> {
    const ourName = this.ourPath.slice(this.path.length + 1);
    for (;;) {
      let members: string[];
      try {
        members = (await this.client.getChildren(this.path, { signal })).filter((c) => c !== READY_NODE).sort();
      } catch (err) {
        if (!isZkError(err, 'NONODE')) throw err;
        members = [];
      }
      if (members.length === 0) break;
      const ours = members.indexOf(ourName);
      if (ours < 0 && this.ourNodeLives) {
        throw new IllegalStateError(`our member node ${this.ourPath} is missing: it was deleted by someone else`, { path: this.path });
      }
      if (members.length === 1) {
        if (this.ourNodeLives && members[0] !== ourName) {
          throw new IllegalStateError(`the last member node ${members[0]} is not ours (${ourName})`, { path: this.path });
        }
        await this.deleteOurNode(signal);
        break;
      }
      let awaited: string;
      if (ours === 0) {
        // The lowest member leaves last: it waits for the highest.
        awaited = members[members.length - 1];
      } else {
        awaited = members[0];
        await this.deleteOurNode(signal);
      }
      await nodeBecomes(this.client, joinPath(this.path, awaited), 'gone', signal);
    }
    await this.client.delete(this.readyPath, { quietly: true, signal });
  }

  /**
   * Deletes our member node, if it still lives. Without a signal (cleanup), the delete is
   * guaranteed. Pinned to the node's session: our path is the same for every enter, so a delete
   * retried in a later session could take the node a later enter made there. A session that ends
   * meanwhile took the node with it: done.
   */
  private async deleteOurNode(signal: AbortSignal | undefined): Promise<void> {
    const session = this.nodeSession;
    this.nodeSession = undefined;
    if (session === undefined || session.isEnded) return;
    try {
      await this.client.delete(this.ourPath, { quietly: true, guaranteed: signal === undefined, signal, session });
    } catch (err) {
      if (!isZkError(err, 'SESSION_LOST')) throw err;
      log('%s: member %s went with its session %s', this.path, this.ourPath, session);
    }
  }
}
