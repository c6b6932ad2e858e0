import { Deadline, DeadlineScope, TIMED_OUT, waitFor } from './deadline';
import { StepLoop } from './StepLoop';
import { MAX_TIMER_MS, startTimer } from './timers';

describe('startTimer', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('honours a delay longer than setTimeout can hold, instead of firing after 1 ms', () => {
    const fired = jest.fn();
    startTimer(MAX_TIMER_MS + 10_000, fired);
    jest.advanceTimersByTime(10);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(10_000);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('never fires for Infinity, and can be cancelled', () => {
    const fired = jest.fn();
    startTimer(Infinity, fired);
    const cancel = startTimer(5, fired);
    cancel();
    jest.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).not.toHaveBeenCalled();
  });
});

describe('waitFor', () => {
  it('settles like the promise when it comes first', async () => {
    await expect(waitFor(Promise.resolve(7), { deadline: Deadline.after(1_000) })).resolves.toBe(7);
    await expect(waitFor(Promise.reject(new Error('x')), { deadline: Deadline.after(1_000) })).rejects.toThrow('x');
  });

  it('resolves TIMED_OUT at the deadline, and hands the late outcome to onLate', async () => {
    let resolveLate!: (v: number) => void;
    const late = new Promise<number>((r) => (resolveLate = r));
    let seen!: Promise<PromiseSettledResult<number>>;
    const result = new Promise<unknown>((done) => {
      seen = new Promise((r) => done(waitFor(late, { deadline: Deadline.after(5), onLate: r })));
    });
    await expect(result).resolves.toBe(TIMED_OUT);
    resolveLate(3);
    await expect(seen).resolves.toEqual({ status: 'fulfilled', value: 3 });
  });

  it('rejects with the reason of a signal that aborts first, or is already aborted', async () => {
    const ac = new AbortController();
    const wait = waitFor(new Promise(() => undefined), { signal: ac.signal });
    ac.abort(new Error('stop'));
    await expect(wait).rejects.toThrow('stop');
    await expect(waitFor(Promise.resolve(1), { signal: ac.signal })).rejects.toThrow('stop');
  });

  it('does not end a wait early for a huge timeout', async () => {
    const result = waitFor(new Promise((r) => setTimeout(() => r('done'), 30)), { deadline: Deadline.after(Number.MAX_SAFE_INTEGER) });
    await expect(result).resolves.toBe('done');
  });
});

describe('DeadlineScope', () => {
  it('aborts with its own reason at the deadline, and tells that from an outer abort', async () => {
    const reason = new Error('deadline');
    const scope = new DeadlineScope(Deadline.after(5), undefined, reason);
    await new Promise((r) => scope.signal.addEventListener('abort', r));
    expect(scope.timedOut).toBe(true);
    expect(scope.isTimeout(scope.signal.reason)).toBe(true);

    const outer = new AbortController();
    const other = new DeadlineScope(Deadline.after(10_000), outer.signal, reason);
    outer.abort(new Error('user'));
    expect(other.signal.aborted).toBe(true);
    expect(other.timedOut).toBe(false);
    other.dispose();
  });

  it('without a reason of its own, makes one at the deadline; an outer abort is never taken for it', async () => {
    const scope = new DeadlineScope(Deadline.after(5), undefined);
    expect(scope.isTimeout(undefined)).toBe(false);
    await new Promise((r) => scope.signal.addEventListener('abort', r));
    expect(scope.signal.reason).toBeInstanceOf(Error);
    expect(scope.timedOut).toBe(true);
    expect(scope.isTimeout(scope.signal.reason)).toBe(true);

    const outer = new AbortController();
    const other = new DeadlineScope(Deadline.after(10_000), outer.signal);
    outer.abort(undefined);
    expect(other.timedOut).toBe(false);
    expect(other.isTimeout(other.signal.reason)).toBe(false);
    other.dispose();
  });
});

describe('StepLoop', () => {
  it('runs one step at a time, and one more for kicks during a step', async () => {
    let running = 0;
    let most = 0;
    let steps = 0;
    let release!: () => void;
    let started!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const firstStarted = new Promise<void>((r) => (started = r));
    const loop = new StepLoop(async () => {
      running++;
      most = Math.max(most, running);
      steps++;
      started();
      if (steps === 1) await gate;
      running--;
    });
    loop.kick();
    // Kicks before the step starts are covered by it; kicks during it make one more step.
    loop.kick();
    await firstStarted;
    loop.kick();
    loop.kick();
    release();
    await loop.idle;
    await loop.idle;
    expect(most).toBe(1);
    expect(steps).toBe(2);
  });

  it('backs off after a failed step, and a kick cuts the back-off short', async () => {
    const errors: number[] = [];
    let calls = 0;
    const loop = new StepLoop(
      async () => {
        calls++;
        if (calls === 1) throw new Error('boom');
      },
      { firstRetryMs: 60_000, onError: (_err, ms) => errors.push(ms) },
    );
    loop.kick();
    await loop.idle;
    expect(errors).toEqual([60_000]);
    loop.kick();
    await loop.idle;
    expect(calls).toBe(2);
    loop.stop();
  });
});
