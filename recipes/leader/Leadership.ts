import { Deadline, metrics, startClock, TIMED_OUT, waitFor } from '../../src/recipeKit';

/**
 * Whether a participant leads, and who is told when that changes: the listeners (`onChange`), the
 * waiters of `await`, and the leadership metric.
 */
export class Leadership {
  private leading = false;
  /** When leadership began, for the metric; 0 when not leading or nobody listened then. */
  private since = 0;
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly metric: { recipe: 'latch'; path: string; id: string },
    private readonly onChange: (leading: boolean) => void,
  ) {}

  get isLeading(): boolean {
    return this.leading;
  }

  /** Leads, or no longer does; tells everyone once per change. */
  set(leading: boolean): void {
    if (!this.end(leading)) return;
    this.onChange(leading);
  }

  /** Ends leadership without telling the listeners (a silent close); true when it led. */
  endQuietly(): boolean {
    return this.end(false);
  }

  /** Wakes every waiter, for them to look again (the participant closed). */
  wakeAll(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** Resolves true once leading (at once if it does), false at the deadline; rejects with the signal's reason. */
  async until(deadline: Deadline, signal: AbortSignal | undefined): Promise<boolean> {
    if (this.leading) return true;
    let wake!: () => void;
    const led = new Promise<void>((resolve) => (wake = resolve));
    this.waiters.add(wake);
    try {
      return (await waitFor(led, { deadline, signal })) !== TIMED_OUT;
    } finally {
      this.waiters.delete(wake);
    }
  }

  private end(leading: boolean): boolean {
    if (this.leading === leading) return false;
    this.leading = leading;
    if (metrics.leadership.hasSubscribers) {
      const ledMs = leading || this.since === 0 ? undefined : performance.now() - this.since;
      metrics.leadership.publish({ ...this.metric, event: leading ? 'gained' : 'lost', ledMs });
    }
    this.since = leading ? startClock(metrics.leadership) : 0;
    if (leading) this.wakeAll();
    return true;
  }
}
