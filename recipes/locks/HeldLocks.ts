import debug from 'debug';
import { type ConnectionState, type Session, subscribe, type ZkClient } from '../../src/recipeKit';

const log = debug('zk-recipes:locks:monitor');

/** A hold as the registry sees it: what it must hear of, and the session it belongs to. */
export interface WatchedHold {
  readonly session: Session;
  /** The client moved to `state`. */
  onState(state: ConnectionState): void;
  /** The hold's session ended. */
  onSessionEnd(): void;
}

/**
 * The holds of one client that are being watched, so that a hold costs no listener of its own:
 * one 'stateChanged' listener for the client and one abort listener per session serve them all.
 * A hold joins when it begins and leaves once lost or released, which costs a Set entry. Each
 * hears of a state change, and of its session's end, as its own listeners would have let it:
 * synchronously, within the client's report, in the order the holds joined.
 */
export class HeldLocks {
  private readonly holds = new Set<WatchedHold>();
  /** The sessions whose end is listened for, once each. */
  private readonly sessions = new WeakSet<Session>();

  constructor(client: ZkClient) {
    // For as long as the client lives: a hold then adds no listener, and a release removes none.
    subscribe(client, 'stateChanged', (state) => this.tell((hold) => hold.onState(state)));
  }

  /** Watches `hold` until it leaves. Its session must not have ended: one that has is never heard of again. */
  join(hold: WatchedHold): void {
    this.holds.add(hold);
    const { session } = hold;
    if (this.sessions.has(session)) return;
    this.sessions.add(session);
    session.signal.addEventListener('abort', () => this.tell((h) => h.session === session && h.onSessionEnd()), { once: true });
  }

  leave(hold: WatchedHold): void {
    this.holds.delete(hold);
  }

  /** Tells every hold, each inside a try: one that throws must not keep the others from hearing. */
  private tell(what: (hold: WatchedHold) => unknown): void {
    // A copy: holds leave as they hear.
    for (const hold of [...this.holds]) {
      try {
        what(hold);
      } catch (err) {
        log('a lock monitor threw: %O', err);
      }
    }
  }
}

const byClient = new WeakMap<ZkClient, HeldLocks>();

/** The client's registry of watched holds, made with its first hold. */
export function heldLocksOf(client: ZkClient): HeldLocks {
  let held = byClient.get(client);
  if (held === undefined) byClient.set(client, (held = new HeldLocks(client)));
  return held;
}
