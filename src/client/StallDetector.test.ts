import { stallDetector } from './StallDetector';

/** Blocks the event loop for `ms`, as a paused process would. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // A stalled process.
  }
}

/** Resolves once the detector's timer (every 100 ms) has surely run since now: timers fire in order of expiry. */
const afterATick = () => new Promise((resolve) => setTimeout(resolve, 250));

describe('the stall detector', () => {
  beforeEach(() => stallDetector.use());
  afterEach(() => stallDetector.release());

  it('sees a stall while it lasts, and remembers when it ended once its timer has run', async () => {
    expect(stallDetector.lastStallEndedAt(300)).toBeUndefined();
    const before = performance.now();
    await new Promise<void>((resolve) =>
      setTimeout(() => {
        block(600);
        // Still in the stalled turn: the timer has not run.
        expect(stallDetector.stalledMs).toBeGreaterThanOrEqual(300);
        resolve();
      }, 0),
    );
    await afterATick();
    expect(stallDetector.stalledMs).toBeLessThan(300);
    const endedAt = stallDetector.lastStallEndedAt(300);
    expect(endedAt).toBeGreaterThan(before + 600);
    expect(endedAt).toBeLessThanOrEqual(performance.now());
    // Nothing as long as ten seconds.
    expect(stallDetector.lastStallEndedAt(10_000)).toBeUndefined();
  });

  it('answers for each length with the latest stall at least that long', async () => {
    await new Promise((resolve) => setTimeout(() => resolve(block(1_500)), 0));
    await afterATick();
    const long = stallDetector.lastStallEndedAt(1_200);
    await new Promise((resolve) => setTimeout(() => resolve(block(300)), 0));
    await afterATick();
    const short = stallDetector.lastStallEndedAt(200);
    expect(long).toBeDefined();
    expect(short).toBeGreaterThan(long!);
    // The shorter, later stall does not hide the longer one.
    expect(stallDetector.lastStallEndedAt(1_200)).toBe(long);
  });
});
