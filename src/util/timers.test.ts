import { FixedDelayTimers } from './timers';

describe('FixedDelayTimers', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('fires each entry once its delay has passed from when it was set, in order', () => {
    const timers = new FixedDelayTimers(100);
    const fired: string[] = [];
    timers.start(() => fired.push('a'));
    jest.advanceTimersByTime(40);
    timers.start(() => fired.push('b'));
    jest.advanceTimersByTime(58);
    expect(fired).toEqual([]);
    jest.advanceTimersByTime(2);
    expect(fired).toEqual(['a']);
    jest.advanceTimersByTime(38);
    expect(fired).toEqual(['a']);
    jest.advanceTimersByTime(2);
    expect(fired).toEqual(['a', 'b']);
    expect(timers.size).toBe(0);
  });

  it('never fires a cancelled entry, and keeps the others on time when the head is cancelled', () => {
    const timers = new FixedDelayTimers(100);
    const fired: string[] = [];
    const cancelA = timers.start(() => fired.push('a'));
    jest.advanceTimersByTime(50);
    const cancelB = timers.start(() => fired.push('b'));
    timers.start(() => fired.push('c'));
    cancelA();
    cancelB();
    cancelB();
    // The cancelled head and the one behind it are dropped at once: only c waits.
    expect(timers.size).toBe(1);
    jest.advanceTimersByTime(98);
    expect(fired).toEqual([]);
    jest.advanceTimersByTime(2);
    expect(fired).toEqual(['c']);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('holds one timer however many entries wait, and none once they are all done', () => {
    const timers = new FixedDelayTimers(1_000);
    const cancels = Array.from({ length: 5_000 }, () => timers.start(() => undefined));
    expect(jest.getTimerCount()).toBe(1);
    for (const cancel of cancels) cancel();
    expect(timers.size).toBe(0);
    // The timer left armed finds nothing to fire, and arms no other.
    jest.advanceTimersByTime(1_000);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('holds one timer when a callback that fires sets the next entry', () => {
    const timers = new FixedDelayTimers(100);
    const fired: string[] = [];
    timers.start(() => {
      fired.push('first');
      timers.start(() => fired.push('second'));
    });
    jest.advanceTimersByTime(100);
    expect(fired).toEqual(['first']);
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(100);
    expect(fired).toEqual(['first', 'second']);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('arms a new timer when the one it armed is long overdue (lost to another clock)', () => {
    const timers = new FixedDelayTimers(100);
    const fired: string[] = [];
    timers.start(() => fired.push('lost'));
    // The armed timer disappears, as one made under a test's fake clock does once real timers return.
    jest.clearAllTimers();
    jest.advanceTimersByTime(250);
    expect(fired).toEqual([]);
    timers.start(() => fired.push('next'));
    // The overdue entry fires at once with the new timer; the new one on time.
    jest.advanceTimersByTime(1);
    expect(fired).toEqual(['lost']);
    jest.advanceTimersByTime(99);
    expect(fired).toEqual(['lost', 'next']);
  });

  it('leaves the process free to exit: its timer is unref’d', () => {
    jest.useRealTimers();
    const setTimeoutSpy = jest.spyOn(global, 'setTimeout');
    try {
      const timers = new FixedDelayTimers(60_000);
      const cancel = timers.start(() => undefined);
      expect(setTimeoutSpy).toHaveBeenCalledTimes(1);
      const timer = setTimeoutSpy.mock.results[0].value as NodeJS.Timeout;
      expect(timer.hasRef()).toBe(false);
      cancel();
      clearTimeout(timer);
    } finally {
      setTimeoutSpy.mockRestore();
    }
  });
});
