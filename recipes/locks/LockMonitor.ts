import debug from 'debug';
import { subscribe } from '../../src/util/events';
import { isZkError } from '../../src/errors';
import type { Session } from '../../src/client/Session';
import type { ZkClient } from '../../src/client/ZkClient';
import type { ConnectionState } from '../../src/client/ConnectionState';
import { LockLostError, type LockLostReason } from './errors';

const log = debug('zk-recipes:locks:monitor');

/** What another party writes into a holder's node to ask it to let go (Curator's Revoker). */
export const REVOKE_MESSAGE = '__REVOKE__';

/**
 * Watches one held lock and aborts its signal, with a LockLostError, the moment the lock can no
 * longer be trusted: the session is LOST; the client closed; the connection is SUSPENDED under the
 * 'standard' error policy; our node is deleted or turns out to belong to another session. State changes are
 * free (the client reports them); the node is watched only once someone asks for the signal, or
 * when the lock is revocable, so an uncontended acquire and release costs no extra request.
 */
export class LockMonitor {
  private readonly controller = new AbortController();
  private readonly stopListening: () => void;
  private watching = false;
  private stopped = false;

  constructor(
    private readonly client: ZkClient,
    readonly node: string,
    private readonly session: Session,
    private readonly onRevoke?: () => void,
  ) {
    const stopStates = subscribe(client, 'stateChanged', (state) => this.onState(state));
    const onSessionEnd = () => this.lose(session.closedByClient ? 'CLIENT_CLOSED' : 'LOST', session.endReason);
    session.signal.addEventListener('abort', onSessionEnd, { once: true });
    this.stopListening = () => {
      stopStates();
      session.signal.removeEventListener('abort', onSessionEnd);
    };
    if (session.isEnded) onSessionEnd();
    else if (client.state !== undefined && !client.isConnected && client.isErrorState('SUSPENDED')) this.lose('SUSPENDED');
    if (onRevoke) this.watchNode();
  }

  /** Aborted with a LockLostError when the lock can no longer be trusted. */
  get signal(): AbortSignal {
    this.watchNode();
    return this.controller.signal;
  }

  /** Stops watching: the lock was released. */
  stop(): void {
    this.stopped = true;
    this.stopListening();
  }

  private onState(state: ConnectionState): void {
    if (this.stopped) return;
    // LOST comes through the session's signal too; this one is for SUSPENDED under 'standard'.
    if (this.client.isErrorState(state)) this.lose(state as LockLostReason);
  }

  private lose(reason: LockLostReason, cause?: unknown): void {
    if (this.controller.signal.aborted || this.stopped) return;
    log('lock node %s lost: %s (session %s)', this.node, reason, this.session);
    this.controller.abort(new LockLostError(reason, { path: this.node, cause }));
  }

  /** Watches our own node's data: its deletion is a loss, and `__REVOKE__` in it asks us to let go. */
  private watchNode(): void {
    if (this.watching || this.stopped || this.controller.signal.aborted) return;
    this.watching = true;
    this.client
      .getData(this.node, {
        watcher: (event) => {
          this.watching = false;
          if (this.stopped) return;
          if (event.type === 'deleted') this.lose('NODE_DELETED');
          else if (event.type === 'sessionLost') this.lose('LOST');
          else this.watchNode();
        },
      })
      .then(({ data, stat }) => {
        if (stat.ephemeralOwner !== this.session.id) this.lose('NOT_OUR_NODE');
        else if (this.onRevoke && data.toString('utf8') === REVOKE_MESSAGE && !this.stopped) {
          try {
            this.onRevoke();
          } catch (err) {
            log('revocation listener for %s threw: %O', this.node, err);
          }
        }
      })
      .catch((err: unknown) => {
        this.watching = false;
        if (isZkError(err, 'NONODE')) this.lose('NODE_DELETED', err);
        else log('watching lock node %s failed: %s', this.node, String(err));
      });
  }
}
