import { now } from '../util/timers';

/** How often the detector's timer runs. */
const TICK_MS = 100;
/** How many past stalls it keeps (each longer than the ones after it): far more than the sizes that matter. */
const MAX_STALLS = 32;

/**
 * Tells how long this process's event loop went without running, as a paused process (SIGSTOP, a
 * long GC pause, a VM freeze) or a blocked loop would.
 *
 * Why: after such a stall, the I/O that arrived meanwhile runs before any overdue timer (libuv
 * polls I/O before it runs timers again), so a reply or an event read from the socket may be
 * acted on while the client still believes it is connected, though the server may have expired
 * the session long ago. Java's client checks its read timeout before it reads; a recipe asks this
 * before it trusts a lock it has just won. A timer that should run every 100 ms and has not
 * for longer is the measure: no clock jumps, no reads.
 *
 * A stall is the whole process's, so one timer serves every client: each started client counts as
 * a user (`use`, then `release` once), and the timer runs while there is any.
 */
class StallDetector {
  private lastTick = now();
  private timer: NodeJS.Timeout | undefined;
  private users = 0;
  /**
   * The stalls seen, as { endedAt, ms }, oldest first, each longer than every later one: a stall
   * at least as long as an older one and later answers every question the older one would.
   */
  private stalls: Array<{ endedAt: number; ms: number }> = [];

  /**
   * Starts the timer for one more user, who calls `release` once when done. (A count, not a
   * function to let go with: a closure for each of ten thousand idle clients adds up.)
   */
  use(): void {
    if (this.users++ === 0) {
      this.lastTick = now();
      this.stalls = [];
      this.timer = setInterval(() => this.tick(), TICK_MS);
      // It must never keep a process alive.
      this.timer.unref();
    }
  }

  /** One user of `use` is done; the timer stops with the last. */
  release(): void {
    if (this.users === 0) return;
    if (--this.users === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private tick(): void {
    const at = now();
    const ms = at - this.lastTick - TICK_MS;
    this.lastTick = at;
    if (ms < TICK_MS) return;
    while (this.stalls.length > 0 && this.stalls[this.stalls.length - 1].ms <= ms) this.stalls.pop();
    this.stalls.push({ endedAt: at, ms });
    if (this.stalls.length > MAX_STALLS) this.stalls.shift();
  }

  /**
   * When the last stall of `minMs` or more ended (seen by the timer's first run after it, so at
   * or after its true end), or undefined if there was none since the detector started. A stall
   * still going on is `stalledMs`.
   */
  lastStallEndedAt(minMs: number): number | undefined {
    for (let i = this.stalls.length - 1; i >= 0; i--) if (this.stalls[i].ms >= minMs) return this.stalls[i].endedAt;
    return undefined;
  }

  /** How long the event loop has gone without running the timer, beyond its period (0 when it runs on time, or while nobody uses it). */
  get stalledMs(): number {
    if (!this.timer) return 0;
    return Math.max(0, now() - this.lastTick - TICK_MS);
  }
}

/** The process's stall detector. */
export const stallDetector = new StallDetector();
