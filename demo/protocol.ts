/**
 * What the demo's parent process and its worker processes say to each other: one JSON object per
 * line, commands on the worker's stdin, events on its stdout. Times are this machine's wall clock
 * in milliseconds, with fractions (all processes share the clock).
 */

/** Commands a worker obeys. */
export type Command =
  /** Take and release a mutex `rounds` times, holding it `holdMs`, thinking up to `thinkMs` between. */
  | { op: 'mutex'; path: string; rounds: number; holdMs: number; thinkMs: number; guardPath: string }
  /** Ask for the read or the write lock of a read-write lock; `granted` says when it is held. */
  | { op: 'rw.acquire'; path: string; mode: 'read' | 'write' }
  /** Release the read-write lock taken with rw.acquire. */
  | { op: 'rw.release' }
  /** Join a leader election with a LeaderLatch. */
  | { op: 'latch'; path: string; id: string }
  /** Put `count` items into a DistributedQueue, one every `intervalMs`. */
  | { op: 'produce'; path: string; count: number; intervalMs: number }
  /** Consume a lock-safe DistributedQueue, spending `workMs` on each item. */
  | { op: 'consume'; path: string; lockPath: string; workMs: number }
  /** Stop consuming. */
  | { op: 'stopConsuming' }
  /** Close every recipe and the client, then exit. */
  | { op: 'close' };

/** Events a worker reports. */
export type WorkerEvent =
  | { event: 'ready'; session: string }
  | { event: 'asked'; at: number; mode?: 'read' | 'write' }
  | { event: 'granted'; at: number; node: string; token: string; mode?: 'read' | 'write' }
  | { event: 'released'; at: number }
  /** Another holder's guard node was there: two holds overlapped. */
  | { event: 'overlap'; at: number; guard: string }
  | { event: 'mutexDone'; at: number }
  | { event: 'isLeader'; at: number }
  | { event: 'notLeader'; at: number }
  | { event: 'put'; at: number; item: string }
  | { event: 'produced'; at: number }
  | { event: 'delivered'; at: number; item: string }
  | { event: 'consumerStopped'; at: number }
  | { event: 'error'; at: number; message: string };

/**
 * Milliseconds on the machine's monotonic clock (CLOCK_MONOTONIC), the same clock in every process
 * on one Linux machine, so that one worker's "released" and the next one's "granted" compare. Not
 * `performance.timeOrigin + performance.now()`: each process fixes its time origin at start-up
 * from two readings, and on a loaded machine processes came out up to 4.5 ms apart (300 processes
 * beside 4 busy loops), which made a hand-off look like an overlap.
 */
export function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
