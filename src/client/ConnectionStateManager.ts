import type { EventEmitter } from 'node:events';
import debug from 'debug';
import { metrics } from '../metrics/channels';
import { emitSafely } from '../util/events';
import type { ConnectionState } from './ConnectionState';
import type { ZkClientEvents } from './operationOptions';
import type { Session } from './Session';

const log = debug('zk-recipes:client:state');

/**
 * Keeps the connection state, like Curator's ConnectionStateManager: a state is reported once
 * (repeats are ignored), in order, to every 'stateChanged' listener of the emitter, and a listener
 * that throws is logged and never breaks the client or the other listeners. Listeners are called
 * synchronously: a lock's signal must abort on SUSPENDED before anything else can run.
 */
export class ConnectionStateManager {
  private current: ConnectionState | undefined;

  constructor(private readonly emitter: EventEmitter<ZkClientEvents>) {}

  get state(): ConnectionState | undefined {
    return this.current;
  }

  /** Moves to `next` and tells the listeners; does nothing when already there. `session`: the client's now, for logs and metrics. */
  set(next: ConnectionState, session: Session | undefined): void {
    const previous = this.current;
    if (previous === next) return;
    this.current = next;
    log('state %s -> %s (session %s)', previous ?? '-', next, session ?? '-');
    if (metrics.state.hasSubscribers) metrics.state.publish({ state: next, previous, sessionId: session?.id ?? 0n });
    emitSafely(this.emitter, 'stateChanged', [next, previous ?? 'LATENT'], log);
  }
}
