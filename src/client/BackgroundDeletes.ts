import debug from 'debug';
import { isRetryableError } from '../retry';
import type { Transport } from '../transport/Transport';
import type { Connection } from './Connection';
import { deleteTree } from './nodeOps';
import { findProtectedNode } from './protection';
import type { Session } from './Session';

const log = debug('zk-recipes:client:background');

/** The pause after a failed try, before the next. */
const RETRY_PAUSE_MS = 50;

/**
 * Deletes that must happen even though the call that asked has returned: Curator's guaranteed
 * deletes, and the clean-up of a protected create whose reply was lost. Each is retried on every
 * connection problem until it is done, fails otherwise, or the session that asked ends (the
 * server then deletes an ephemeral node itself).
 */
export class BackgroundDeletes {
  /** The deletes under way, by session and path; made with the first. */
  private pending: Set<string> | undefined;

  constructor(
    private readonly connection: Connection,
    private readonly connectionTimeoutMs: number,
  ) {}

  /** How many deletes are under way. */
  get size(): number {
    return this.pending?.size ?? 0;
  }

  /**
   * Deletes a node (a full path) in the background, in `session` (for an ephemeral node of it),
   * or else in the session current now. It never runs in a later session: there the path may hold
   * another session's node. Nothing is done for a session that has ended: its node went with it.
   */
  delete(fullPath: string, version = -1, recursive = false, session: Session | undefined = this.connection.session): void {
    if (session?.isEnded) return;
    const key = `${session ?? '-'} ${fullPath}`;
    const pending = (this.pending ??= new Set());
    if (pending.has(key)) return;
    pending.add(key);
    void this.run(
      `background delete of ${fullPath}`,
      async (t) => {
        await deleteTree(t, fullPath, version, recursive);
        log('background delete of %s done (session %s)', fullPath, session ?? '-');
      },
      session,
    ).finally(() => pending.delete(key));
  }

  /** Finds the node a lost protected create may have made, and deletes it (Curator's findAndDeleteProtectedNodeInBackground). */
  deleteProtected(parent: string, protectedId: string, ephemeral: boolean): void {
    const session = this.connection.session;
    void this.run(
      `protected clean-up under ${parent}`,
      async (t) => {
        const found = await findProtectedNode(t, parent, protectedId, ephemeral, (stale) => this.delete(stale, -1, false, session));
        if (found) this.delete(found, -1, false, session);
      },
      session,
    );
  }

  /** Runs `work` on `session`'s connection, again after every connection problem, until that session ends. Never rejects. */
  private async run(what: string, work: (t: Transport) => Promise<void>, session: Session | undefined): Promise<void> {
    try {
      while (this.connection.isStarted && this.connection.session === session && !session?.isEnded) {
        try {
          const live = this.connection.live() ?? (await this.connection.waitForConnection(this.connectionTimeoutMs, undefined));
          if (live === undefined || live.session !== session) continue;
          await work(live.transport);
          return;
        } catch (err) {
          if (!isRetryableError(err)) {
            log('%s ended: %O', what, err);
            return;
          }
          // A transport may fail a call at once before the client has heard that its connection
          // dropped: without a pause this loop would go round in microtasks, and the event loop
          // that brings the news would never turn.
          await this.connection.backOff(RETRY_PAUSE_MS, undefined);
        }
      }
    } catch (err) {
      log('%s stopped: %O', what, err);
    }
  }
}
