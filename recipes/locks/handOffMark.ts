import { type PreparedCreate, type Stat, type ZkClient } from '../../src/recipeKit';
import { REVOKE_MESSAGE } from './LockMonitor';

/**
 * The hand-off mark: how a holder of an exclusive lock tells the waiter behind it, in another
 * process (within one, localHandOff.ts tells it with no write), that it holds,
 * so that the waiter takes the lock on that node's deletion with no listing. Curator's waiter, and
 * ours without a mark, lists the children on every wake-up, since the node it watched may have
 * gone without ever holding (a waiter that gave up); a node that held had nothing before it, and
 * no node created later sorts before it, so once it goes the node just behind it is first.
 *
 * - **The mark**: the holder writes its node's data again, unchanged, at version 0. The node's
 *   data (its IP, or a LeaderSelector's participant id) stays what Curator's layout says.
 * - **Read**: a waiter that read the node ahead at version 0 and then reads it at version 1 with
 *   the same bytes has seen the mark. Anything else is no mark: Curator's `Revoker` writes
 *   `__REVOKE__` (at any version, which also makes a later mark fail), and a node first read at a
 *   later version proves nothing. With no mark, the waiter lists as before.
 * - **The waiter's own node**: a claim on the deletion alone needs our own node watched (see
 *   Contender). The waiter starts that watch on the first change of the node ahead, in the same
 *   write as the read that checks the change, rather than once that read has shown the mark: a
 *   round trip less between the mark and the moment the waiter is ready, which a hold of 1 ms
 *   needs (the mark's event comes 250–400 µs after it is written, on one idle server).
 * - **When**: only by a holder that waited (the lock is contended), whose win told no waiter of
 *   this process (see localHandOff.ts), and only once its hold has
 *   lasted past the turn of the event loop it was won in. A holder that releases at once writes
 *   nothing: its delete would come right behind the mark, and the waiter would read the node again
 *   for nothing. A hold that lasts gives the waiter the time to read the mark before the delete.
 *
 * - **Faults**: the mark is sent only while the lease can be trusted (not on SUSPENDED under the
 *   'standard' policy, nor after LOST), through the client's retry policy; one that fails is
 *   forgotten. One that lands late is still true: the node did hold. A waiter whose session or
 *   connection changes while it waits starts its wait again, and reads the node at version 1:
 *   no mark, so it lists.
 *
 * Only for a lock with one holder whose waiters each watch the node just ahead (the mutex, and the
 * mutexes inside the semaphores and LeaderSelector); the read-write lock lists on every wake-up.
 */
export function writeHandOffMark(client: ZkClient, node: string, create: PreparedCreate): void {
  // Best effort: a mark that fails (the node gone, revoked, or no connection) leaves the waiter
  // to list, as it would without one.
  client.setData(node, create.request.data, { version: 0, compressed: create.compressed }).catch(() => undefined);
}

/** What one waiter has seen of the node ahead: whether it is marked. */
export class HandOffMarkReader {
  /** The node's bytes at version 0, as first read (a string: no view of a socket's buffer kept). */
  private original: string | undefined;
  private seen = false;

  /** Whether a read has shown the mark. */
  get marked(): boolean {
    return this.seen;
  }

  /** The node ahead won in this process (see localHandOff.ts): as good as its mark. */
  heldHere(): void {
    this.original = undefined;
    this.seen = true;
  }

  /** Takes one read of the node ahead; true when it shows the mark for the first time. */
  read(data: Buffer, stat: Stat): boolean {
    if (this.seen) return false;
    if (stat.version === 0) {
      this.original ??= data.toString('latin1');
      return false;
    }
    if (stat.version !== 1 || this.original === undefined || this.original === REVOKE_MESSAGE) return false;
    if (data.length !== this.original.length || data.toString('latin1') !== this.original) return false;
    this.original = undefined;
    this.seen = true;
    return true;
  }
}
