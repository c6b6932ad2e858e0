/**
 * What zk-recipes publishes on `node:diagnostics_channel`, for metrics and tracing. Subscribe with
 * `diagnostics_channel.subscribe(METRICS_CHANNELS.lockWait, (event) => ...)`, or use an exporter
 * (`exportPrometheusMetrics`). Nothing is paid when no one subscribes: events are built, and clocks
 * read, only while a channel has subscribers.
 */
import { channel, type Channel } from 'node:diagnostics_channel';
import type { ConnectionState } from '../client/ConnectionState';

/** The channel names. */
export const METRICS_CHANNELS = Object.freeze({
  /** Every client operation (its retries included): OperationEvent. */
  operation: 'zk-recipes:client:operation',
  /** Every connection state change: StateEvent. */
  state: 'zk-recipes:client:state',
  /** Every wait for a lock, however it ended: LockWaitEvent. */
  lockWait: 'zk-recipes:lock:wait',
  /** Every hold of a lock, from the acquire to its release or loss: LockHoldEvent. */
  lockHold: 'zk-recipes:lock:hold',
  /** Leadership gained and lost: LeadershipEvent. */
  leadership: 'zk-recipes:leader:leadership',
  /** Queue items put, delivered and requeued: QueueEvent. */
  queue: 'zk-recipes:queue:item',
} as const);

/** A client operation, once it has settled. */
export interface OperationEvent {
  /** 'create', 'delete', 'getData', ... */
  readonly operation: string;
  /** Relative to the client's namespace. */
  readonly path: string;
  /** From the call to its settling, waits for a connection and retries included. */
  readonly durationMs: number;
  /** How many times it was tried again. */
  readonly retries: number;
  /** The error's code when it failed ('NONODE', 'CONNECTION_TIMEOUT', ...); undefined when it succeeded. */
  readonly code: string | undefined;
}

/** A connection state change. */
export interface StateEvent {
  readonly state: ConnectionState;
  readonly previous: ConnectionState | undefined;
  /** The session the state is about; 0n when there is none. */
  readonly sessionId: bigint;
}

/** The kind of lock. */
export type LockRecipe = 'mutex' | 'read' | 'write' | 'semaphore' | 'selector';

/** A wait for a lock, once it has ended. */
export interface LockWaitEvent {
  readonly recipe: LockRecipe;
  /** The lock's path, relative to the client's namespace. */
  readonly path: string;
  readonly waitMs: number;
  readonly outcome: 'acquired' | 'timeout' | 'aborted' | 'error';
  /** The error's code, for 'error'. */
  readonly code?: string;
}

/** A hold of a lock, once it has ended. */
export interface LockHoldEvent {
  readonly recipe: LockRecipe;
  readonly path: string;
  readonly node: string;
  readonly holdMs: number;
  /** 'released' by its holder, or 'lost' (the lease's signal aborted first). */
  readonly outcome: 'released' | 'lost';
  /** For 'lost': the LockLostError's reason ('SUSPENDED', 'LOST', 'NODE_DELETED', ...). */
  readonly reason?: string;
}

/** Leadership gained or lost. */
export interface LeadershipEvent {
  readonly recipe: 'latch' | 'selector';
  readonly path: string;
  readonly id: string;
  readonly event: 'gained' | 'lost';
  /** For 'lost': how long it led. */
  readonly ledMs?: number;
}

/** A queue node put, handed to a consumer, or requeued after its handler failed. */
export interface QueueEvent {
  readonly path: string;
  readonly event: 'put' | 'delivered' | 'requeued';
  /** The node's name, such as `queue-0000000012`. */
  readonly node: string;
  /** How many items the node holds (more than one only from `putMulti`). */
  readonly items: number;
}

/** The channels, as objects: check `hasSubscribers` before building an event. */
export const metrics = Object.freeze({
  operation: channel(METRICS_CHANNELS.operation) as TypedChannel<OperationEvent>,
  state: channel(METRICS_CHANNELS.state) as TypedChannel<StateEvent>,
  lockWait: channel(METRICS_CHANNELS.lockWait) as TypedChannel<LockWaitEvent>,
  lockHold: channel(METRICS_CHANNELS.lockHold) as TypedChannel<LockHoldEvent>,
  leadership: channel(METRICS_CHANNELS.leadership) as TypedChannel<LeadershipEvent>,
  queue: channel(METRICS_CHANNELS.queue) as TypedChannel<QueueEvent>,
});

/** A channel whose messages have one type. */
export interface TypedChannel<E> extends Channel {
  publish(message: E): void;
}

/** A start time when `channel` has subscribers, else 0: so that a quiet channel reads no clock. */
export function startClock(ch: Channel): number {
  return ch.hasSubscribers ? performance.now() : 0;
}

/** What a wait's outcome was, from the error that ended it (if any). */
export function waitOutcome(err: unknown, signal: AbortSignal | undefined): LockWaitEvent['outcome'] {
  if (err === undefined) return 'acquired';
  if (signal?.aborted && err === signal.reason) return 'aborted';
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'LOCK_TIMEOUT' ? 'timeout' : 'error';
}
