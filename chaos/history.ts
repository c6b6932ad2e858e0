/**
 * The history of a chaos run: what every process did and when, on one clock, and the recorder that
 * gathers it.
 *
 * Every process of a run (the runner, the nemesis, the register, the workers) lives on this machine,
 * so one clock serves them all: CLOCK_MONOTONIC (`process.hrtime`), which is the same for every
 * process on a Linux machine, never steps, and has sub-millisecond resolution. The report turns it
 * into wall-clock time with the pair of readings taken when the run starts.
 */
import { writeFileSync } from 'node:fs';

/** Milliseconds on the machine's monotonic clock, shared by every process of the run. */
export function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** The kinds of hold the workload takes. */
export type HoldKind = 'mutex' | 'rw-read' | 'rw-write' | 'sem' | 'latch' | 'selector';

/** A worker's ZooKeeper connection state, as the client reported it. */
export interface StateEvent {
  readonly type: 'state';
  readonly at: number;
  readonly worker: number;
  readonly state: string;
  /** Hex session id after the change ('0x0' when none). */
  readonly session: string;
}

/** A call to acquire (or tryAcquire) began. */
export interface AcquireEvent {
  readonly type: 'acquire';
  readonly at: number;
  readonly worker: number;
  readonly kind: HoldKind;
  readonly lock: string;
  /** The call's own id, shared with its outcome. */
  readonly call: string;
  /** What the call was given: `timeoutMs`, 0 for tryAcquire. */
  readonly askedMs: number;
  /**
   * How it ended: 'held' (see the hold-begin that follows), 'none' (tryAcquire found it taken),
   * 'timeout', 'error', or 'stopped' (aborted because the workload stops).
   */
  readonly outcome: 'held' | 'none' | 'timeout' | 'error' | 'stopped';
  /** When it ended. */
  readonly endAt: number;
  /** The error's name and code, for outcome 'error' and 'timeout'. */
  readonly error?: string;
  /** True when the error is not a ZkError: a crash-worthy bug, not a fault. */
  readonly untyped?: boolean;
}

/** A hold began: the acquire resolved, or leadership began. */
export interface HoldBeginEvent {
  readonly type: 'hold-begin';
  readonly at: number;
  readonly worker: number;
  readonly kind: HoldKind;
  readonly lock: string;
  readonly hold: string;
  /** The async flow of the worker that holds (two flows of one worker must still exclude each other). */
  readonly flow: string;
  /** The fencing token (decimal), or undefined until known (see hold-token). */
  readonly token?: string;
  /** The lock node, when known. */
  readonly node?: string;
  /** Hex session id of the client when the hold began. */
  readonly session: string;
  /** The lease's signal had already aborted when the acquire resolved: the lock was never held. */
  readonly aborted?: true;
}

/** A leader learnt its fencing token after its hold began (a latch or selector reads its node). */
export interface HoldTokenEvent {
  readonly type: 'hold-token';
  readonly at: number;
  readonly worker: number;
  readonly hold: string;
  readonly token: string;
  readonly node: string;
}

/** A hold ended: released, its signal aborted, leadership ended, or the register fenced it off. */
export interface HoldEndEvent {
  readonly type: 'hold-end';
  readonly at: number;
  readonly worker: number;
  readonly hold: string;
  readonly how: 'release' | 'lost' | 'fenced' | 'stop';
  /** For 'lost': the signal's reason (LockLostError reason, or the error's name). */
  readonly reason?: string;
}

/** A `release()` (or a leader's close) resolved: how long it took, from the hold's end. */
export interface ReleaseEvent {
  readonly type: 'release';
  readonly at: number;
  readonly worker: number;
  readonly hold: string;
  readonly releaseMs: number;
  readonly error?: string;
}

/** One operation the register judged. Recorded by the register, stamped when it judged it. */
export interface RegisterEvent {
  readonly type: 'register';
  readonly at: number;
  readonly worker: number;
  readonly hold: string;
  readonly res: string;
  readonly op: 'read' | 'write' | 'check' | 'enter' | 'exit';
  readonly token: string;
  readonly accepted: boolean;
  /** The highest token the register had accepted before this operation (decimal). */
  readonly highest: string;
  /** Counter value before and after (read, write). */
  readonly before?: number;
  readonly after?: number;
  /** For a write: the value the writer read. A write whose `expect` differs from `before` lost an increment. */
  readonly expect?: number;
  /** Holds inside the resource when the operation came: a writer between its read and its write, or the semaphore's holders. */
  readonly inside?: readonly string[];
}

/** A producer put an item. */
export interface PutEvent {
  readonly type: 'put';
  readonly at: number;
  readonly worker: number;
  readonly item: string;
  readonly endAt: number;
  /** 'ok': acknowledged, so it must be consumed; 'failed': it may or may not be in the queue. */
  readonly outcome: 'ok' | 'failed';
  readonly error?: string;
}

/** A consumer's handler ran on an item. */
export interface ConsumeEvent {
  readonly type: 'consume';
  readonly at: number;
  readonly worker: number;
  readonly item: string;
  /** The queue node the item came from. */
  readonly queueNode: string;
  readonly endAt: number;
  /** 'done': the handler resolved; 'failed': it threw on purpose (the item is requeued); 'lost': its lock was lost. */
  readonly outcome: 'done' | 'failed' | 'lost';
}

/** A fault of the nemesis began or ended. */
export interface FaultEvent {
  readonly type: 'fault';
  readonly at: number;
  readonly id: number;
  readonly kind: string;
  readonly phase: 'start' | 'end';
  /** 'server 2 (leader)', 'worker 3', 'all workers'. */
  readonly target: string;
  /** The worker index it targets, if one. */
  readonly worker?: number;
  /** The session it expired, for expire-session. */
  readonly session?: string;
  readonly detail?: string;
}

/** The event loop of a worker was late by `lagMs`: a block, or a pause by the nemesis. */
export interface LagEvent {
  readonly type: 'lag';
  readonly at: number;
  readonly worker: number;
  readonly lagMs: number;
}

/** Something the run itself noted: a worker ready, stopped, crashed; an unexpected error; a check of the tree. */
export interface NoteEvent {
  readonly type: 'note';
  readonly at: number;
  readonly worker?: number;
  readonly what: 'ready' | 'stopped' | 'exited' | 'crashed' | 'unexpected' | 'unhandled-rejection' | 'leftover' | 'drain' | 'freezing' | 'harness' | 'info';
  readonly detail: string;
}

export type HistoryEvent =
  | StateEvent
  | AcquireEvent
  | HoldBeginEvent
  | HoldTokenEvent
  | HoldEndEvent
  | ReleaseEvent
  | RegisterEvent
  | PutEvent
  | ConsumeEvent
  | FaultEvent
  | LagEvent
  | NoteEvent;

/** What a saved history holds: enough to check it again and to replay its schedule. */
export interface SavedHistory {
  readonly seed: number;
  readonly args: Record<string, unknown>;
  /** Wall-clock ms and monotonic ms read together at the start of the run. */
  readonly clock: { readonly wallMs: number; readonly monoMs: number };
  readonly schedule: readonly unknown[];
  /** When the workers were told to stop (monotonic ms). */
  readonly stopAt: number;
  readonly events: readonly HistoryEvent[];
}

/**
 * Gathers events from every process of the run, in arrival order; `sorted()` orders them by time.
 * It also knows who holds what now (as far as the events that arrived tell), so that the nemesis
 * can aim a fault at a leader.
 */
export class HistoryRecorder {
  private readonly events: HistoryEvent[] = [];
  private readonly open = new Map<string, { worker: number; kind: HoldKind }>();

  record(event: HistoryEvent): void {
    this.events.push(event);
    if (event.type === 'hold-begin') this.open.set(event.hold, { worker: event.worker, kind: event.kind });
    else if (event.type === 'hold-end') this.open.delete(event.hold);
  }

  /** The workers that hold a `kind` now. */
  holders(kind: HoldKind): number[] {
    return [...new Set([...this.open.values()].filter((h) => h.kind === kind).map((h) => h.worker))];
  }

  get size(): number {
    return this.events.length;
  }

  /** Every event, by time (stable for equal times). */
  sorted(): HistoryEvent[] {
    return this.events.map((e, i) => [e, i] as const).sort((a, b) => a[0].at - b[0].at || a[1] - b[1]).map(([e]) => e);
  }

  /** Writes the history as JSON, with what it takes to reproduce the run. */
  save(file: string, meta: Omit<SavedHistory, 'events'>): void {
    const saved: SavedHistory = { ...meta, events: this.sorted() };
    writeFileSync(file, JSON.stringify(saved));
  }
}

/** Parses one JSON line of a child process as an event; undefined when it is not one. */
export function parseEventLine(line: string): HistoryEvent | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(line) as { type?: unknown; at?: unknown };
    return typeof value.type === 'string' && typeof value.at === 'number' ? (value as HistoryEvent) : undefined;
  } catch {
    return undefined;
  }
}
