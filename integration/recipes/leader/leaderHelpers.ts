import type { LeaderLatch } from '../../../recipes/leader';
import { timing } from '../../helpers';

export type LeadershipEventType = 'isLeader' | 'notLeader';

export interface LeadershipEvent {
  readonly who: string;
  readonly type: LeadershipEventType;
  /** Order of the event among all events of this log (exact within the process). */
  readonly seq: number;
  readonly at: number;
}

export interface Interval {
  readonly who: string;
  readonly from: number;
  /** Sequence of the end; undefined while it lasts. */
  to: number | undefined;
}

/**
 * Records when each participant starts and stops leading, in the order the process saw it, so a
 * test can wait for the next event of one participant and check that no two leaderships overlapped.
 */
export class LeadershipLog {
  readonly events: LeadershipEvent[] = [];
  readonly intervals: Interval[] = [];
  private seq = 0;
  private waiters: Array<{ test: (e: LeadershipEvent) => boolean; from: number; resolve: (e: LeadershipEvent) => void }> = [];

  /** Follows a latch's isLeader and notLeader events under the name `who`. */
  trackLatch(who: string, latch: LeaderLatch): void {
    latch.on('isLeader', () => this.record(who, 'isLeader'));
    latch.on('notLeader', () => this.record(who, 'notLeader'));
  }

  record(who: string, type: LeadershipEventType): LeadershipEvent {
    const event: LeadershipEvent = { who, type, seq: ++this.seq, at: Date.now() };
    this.events.push(event);
    if (type === 'isLeader') this.intervals.push({ who, from: event.seq, to: undefined });
    else {
      const open = this.intervals.find((i) => i.who === who && i.to === undefined);
      if (open) open.to = event.seq;
    }
    for (const w of [...this.waiters]) {
      if (this.events.length - 1 >= w.from && w.test(event)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(event);
      }
    }
    return event;
  }

  /** A mark for `next`: only events after it count. */
  mark(): number {
    return this.events.length;
  }

  /** Resolves with the first event of `who` of `type` after `from` (default: from the start); rejects after `timeoutMs`. */
  next(who: string, type: LeadershipEventType, from = 0, timeoutMs = timing(20_000)): Promise<LeadershipEvent> {
    const test = (e: LeadershipEvent) => e.who === who && e.type === type;
    const seen = this.events.slice(from).find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`no ${type} of ${who} within ${timeoutMs} ms; events: ${this.describe()}`));
      }, timeoutMs);
      const waiter = {
        test,
        from,
        resolve: (e: LeadershipEvent) => {
          clearTimeout(timer);
          resolve(e);
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** Resolves with the first isLeader of anyone after `from`. */
  nextLeader(from: number, timeoutMs = timing(20_000)): Promise<LeadershipEvent> {
    const seen = this.events.slice(from).find((e) => e.type === 'isLeader');
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`no isLeader within ${timeoutMs} ms; events: ${this.describe()}`));
      }, timeoutMs);
      const waiter = {
        test: (e: LeadershipEvent) => e.type === 'isLeader',
        from,
        resolve: (e: LeadershipEvent) => {
          clearTimeout(timer);
          resolve(e);
        },
      };
      this.waiters.push(waiter);
    });
  }

  /**
   * A `takeLeadership` for a LeaderSelector that records its leadership under `who` and leads
   * until `release()` is called or its signal aborts. `signals` holds the signal of every call.
   */
  selectorTask(who: string): SelectorTask {
    const task: SelectorTask = {
      signals: [],
      release: () => undefined,
      takeLeadership: async (signal) => {
        task.signals.push(signal);
        this.record(who, 'isLeader');
        try {
          await new Promise<void>((resolve) => {
            task.release = resolve;
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
        } finally {
          task.release = () => undefined;
          this.record(who, 'notLeader');
        }
      },
    };
    return task;
  }

  /** Who leads now, by the events. */
  leaders(): string[] {
    return this.intervals.filter((i) => i.to === undefined).map((i) => i.who);
  }

  /** Pairs of leaderships that overlapped, described; empty when none did. */
  overlaps(): string[] {
    const found: string[] = [];
    const sorted = [...this.intervals].sort((a, b) => a.from - b.from);
    for (let i = 0; i < sorted.length; i++) {
      for (let j = i + 1; j < sorted.length; j++) {
        const a = sorted[i];
        const b = sorted[j];
        if (a.to === undefined || b.from < a.to) found.push(`${a.who}[${a.from}..${a.to ?? ''}] and ${b.who}[${b.from}..${b.to ?? ''}]`);
      }
    }
    return found;
  }

  describe(): string {
    return this.events.map((e) => `${e.seq}:${e.who}:${e.type}`).join(' ');
  }
}

/** A controllable takeLeadership; see `LeadershipLog.selectorTask`. */
export interface SelectorTask {
  readonly signals: AbortSignal[];
  /** Ends the current leadership (takeLeadership returns). */
  release: () => void;
  readonly takeLeadership: (signal: AbortSignal) => Promise<void>;
}
