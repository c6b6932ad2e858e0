import { InvalidArgumentError, serverError, ZkError } from '../errors';
import {
  BoundedExponentialBackoffRetry,
  ExponentialBackoffRetry,
  isRetryableError,
  RetryForever,
  RetryNTimes,
  RetryOneTime,
  RetryUntilElapsed,
  SessionFailedRetryPolicy,
  type RetryPolicy,
} from './index';

const CONNECTION_LOSS = new ZkError('CONNECTIONLOSS', 'connection lost');
const SESSION_EXPIRED = new ZkError('SESSIONEXPIRED', 'session expired');
const NO_NODE = new ZkError('NONODE', 'no node');

/** The largest double below 1: the top of Math.random's range. */
const MAX_RANDOM = 1 - Number.EPSILON / 2;
const minRandom = (): number => 0;
const maxRandom = (): number => MAX_RANDOM;

function expectInvalid(fn: () => unknown, message: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(InvalidArgumentError);
  const error = caught as InvalidArgumentError;
  expect(error.code).toBe('INVALID_ARGUMENT');
  expect(error.name).toBe('InvalidArgumentError');
  expect(error.message).toBe(message);
}

/** Each policy under test, built so that it would allow retry 0 at elapsed 0. */
const ALL_POLICIES: Array<[string, () => RetryPolicy]> = [
  ['ExponentialBackoffRetry', () => new ExponentialBackoffRetry({ random: maxRandom })],
  ['BoundedExponentialBackoffRetry', () => new BoundedExponentialBackoffRetry({ maxSleepMs: 5000 })],
  ['RetryNTimes', () => new RetryNTimes({ n: 3, sleepMsBetweenRetries: 10 })],
  ['RetryOneTime', () => new RetryOneTime({ sleepMsBetweenRetry: 10 })],
  ['RetryForever', () => new RetryForever({ retryIntervalMs: 10 })],
  ['RetryUntilElapsed', () => new RetryUntilElapsed({ maxElapsedTimeMs: 1000, sleepMsBetweenRetries: 10 })],
  ['SessionFailedRetryPolicy', () => new SessionFailedRetryPolicy(new RetryNTimes({ n: 3, sleepMsBetweenRetries: 10 }))],
];

describe('isRetryableError', () => {
  it.each(['CONNECTIONLOSS', 'OPERATIONTIMEOUT', 'SESSIONMOVED', 'SESSIONEXPIRED'] as const)('is true for a ZkError %s', (code) => {
    expect(isRetryableError(new ZkError(code, code))).toBe(true);
  });

  it('is true for an error built from a return code', () => {
    expect(isRetryableError(serverError(-4, { path: '/a' }))).toBe(true);
    expect(isRetryableError(serverError(-101, { path: '/a' }))).toBe(false);
  });

  it.each([
    ['a ZkError NONODE', NO_NODE],
    ['a ZkError NODEEXISTS', new ZkError('NODEEXISTS', 'exists')],
    ['an InvalidArgumentError', new InvalidArgumentError('bad')],
    ['a plain Error', new Error('CONNECTIONLOSS')],
    ['a look-alike object', { code: 'CONNECTIONLOSS' }],
    ['undefined', undefined],
    ['null', null],
    ['a string', 'CONNECTIONLOSS'],
  ])('is false for %s', (_label, error) => {
    expect(isRetryableError(error)).toBe(false);
  });
});

describe.each(ALL_POLICIES)('%s with a non-retryable error', (_name, make) => {
  it.each([
    ['NONODE', NO_NODE],
    ['a plain Error', new Error('boom')],
    ['undefined', undefined],
  ])('gives up on %s', (_label, error) => {
    expect(make().allowRetry(0, 0, error)).toBe(false);
  });

  it('allows the first retry of a connection loss', () => {
    expect(typeof make().allowRetry(0, 0, CONNECTION_LOSS)).toBe('number');
  });
});

describe('ExponentialBackoffRetry', () => {
  it('has frozen defaults of 1000 ms, 3 retries and no ceiling', () => {
    expect(ExponentialBackoffRetry.DEFAULTS).toEqual({ baseSleepMs: 1000, maxRetries: 3, maxSleepMs: Infinity });
    expect(Object.isFrozen(ExponentialBackoffRetry.DEFAULTS)).toBe(true);
    const policy = new ExponentialBackoffRetry();
    expect(policy.baseSleepMs).toBe(1000);
    expect(policy.maxRetries).toBe(3);
    expect(policy.maxSleepMs).toBe(Infinity);
  });

  it('waits baseSleepMs when the random integer is 0 (never less than one unit)', () => {
    const policy = new ExponentialBackoffRetry({ baseSleepMs: 100, maxRetries: 10, random: minRandom });
    for (let k = 0; k < 10; k++) expect(policy.allowRetry(k, 0, CONNECTION_LOSS)).toBe(100);
  });

  it('waits baseSleepMs * (2^(k+1) - 1) at the top of the random range', () => {
    const policy = new ExponentialBackoffRetry({ baseSleepMs: 100, maxRetries: 10, random: maxRandom });
    expect(policy.allowRetry(0, 0, CONNECTION_LOSS)).toBe(100);
    expect(policy.allowRetry(1, 0, CONNECTION_LOSS)).toBe(300);
    expect(policy.allowRetry(2, 0, CONNECTION_LOSS)).toBe(700);
    expect(policy.allowRetry(3, 0, CONNECTION_LOSS)).toBe(1500);
    expect(policy.allowRetry(9, 0, CONNECTION_LOSS)).toBe(102_300);
  });

  it('scales the random value to an integer in [0, 2^(k+1))', () => {
    const policy = new ExponentialBackoffRetry({ baseSleepMs: 10, maxRetries: 5, random: () => 0.5 });
    expect(policy.allowRetry(0, 0, CONNECTION_LOSS)).toBe(10); // floor(0.5 * 2) = 1
    expect(policy.allowRetry(1, 0, CONNECTION_LOSS)).toBe(20); // floor(0.5 * 4) = 2
    expect(policy.allowRetry(2, 0, CONNECTION_LOSS)).toBe(40); // floor(0.5 * 8) = 4
    expect(policy.allowRetry(3, 0, CONNECTION_LOSS)).toBe(80);
  });

  it('keeps the random integer in range when random() misbehaves', () => {
    const high = new ExponentialBackoffRetry({ baseSleepMs: 10, random: () => 1 });
    expect(high.allowRetry(1, 0, CONNECTION_LOSS)).toBe(30);
    const nan = new ExponentialBackoffRetry({ baseSleepMs: 10, random: () => NaN });
    expect(nan.allowRetry(1, 0, CONNECTION_LOSS)).toBe(10);
    const negative = new ExponentialBackoffRetry({ baseSleepMs: 10, random: () => -3 });
    expect(negative.allowRetry(1, 0, CONNECTION_LOSS)).toBe(10);
  });

  it('returns maxSleepMs when the delay exceeds it, and the delay when it does not', () => {
    const policy = new ExponentialBackoffRetry({ baseSleepMs: 1000, maxSleepMs: 3000, maxRetries: 5, random: maxRandom });
    expect(policy.allowRetry(0, 0, CONNECTION_LOSS)).toBe(1000);
    expect(policy.allowRetry(1, 0, CONNECTION_LOSS)).toBe(3000); // exactly the ceiling
    expect(policy.allowRetry(2, 0, CONNECTION_LOSS)).toBe(3000); // 7000 capped
    const lower = new ExponentialBackoffRetry({ baseSleepMs: 1000, maxSleepMs: 2500, random: maxRandom });
    expect(lower.allowRetry(1, 0, CONNECTION_LOSS)).toBe(2500);
    const belowBase = new ExponentialBackoffRetry({ baseSleepMs: 1000, maxSleepMs: 400, random: minRandom });
    expect(belowBase.allowRetry(0, 0, CONNECTION_LOSS)).toBe(400);
  });

  it('allows exactly maxRetries retries', () => {
    const policy = new ExponentialBackoffRetry({ baseSleepMs: 1, maxRetries: 3, random: minRandom });
    expect(policy.allowRetry(0, 0, CONNECTION_LOSS)).toBe(1);
    expect(policy.allowRetry(2, 0, CONNECTION_LOSS)).toBe(1);
    expect(policy.allowRetry(3, 0, CONNECTION_LOSS)).toBe(false);
    expect(policy.allowRetry(4, 0, CONNECTION_LOSS)).toBe(false);
  });

  it('allows no retry with maxRetries 0', () => {
    expect(new ExponentialBackoffRetry({ maxRetries: 0 }).allowRetry(0, 0, CONNECTION_LOSS)).toBe(false);
  });

  it('lowers maxRetries above 29 to 29', () => {
    expect(ExponentialBackoffRetry.MAX_RETRIES_LIMIT).toBe(29);
    const policy = new ExponentialBackoffRetry({ baseSleepMs: 1, maxRetries: 1000, random: maxRandom });
    expect(policy.maxRetries).toBe(29);
    expect(policy.allowRetry(28, 0, CONNECTION_LOSS)).toBe(2 ** 29 - 1);
    expect(policy.allowRetry(29, 0, CONNECTION_LOSS)).toBe(false);
    expect(new ExponentialBackoffRetry({ maxRetries: 29 }).maxRetries).toBe(29);
    expect(new ExponentialBackoffRetry({ maxRetries: 30 }).maxRetries).toBe(29);
  });

  it('ignores elapsed time', () => {
    const policy = new ExponentialBackoffRetry({ baseSleepMs: 5, random: minRandom });
    expect(policy.allowRetry(0, Number.MAX_SAFE_INTEGER, CONNECTION_LOSS)).toBe(5);
  });

  it('retries every retryable code, including SESSIONEXPIRED', () => {
    const policy = new ExponentialBackoffRetry({ baseSleepMs: 5, random: minRandom });
    for (const code of ['CONNECTIONLOSS', 'OPERATIONTIMEOUT', 'SESSIONMOVED', 'SESSIONEXPIRED'] as const) {
      expect(policy.allowRetry(0, 0, new ZkError(code, code))).toBe(5);
    }
  });

  it('does not draw a random number when it gives up', () => {
    const random = jest.fn(() => 0.5);
    const policy = new ExponentialBackoffRetry({ maxRetries: 1, random });
    expect(policy.allowRetry(1, 0, CONNECTION_LOSS)).toBe(false);
    expect(policy.allowRetry(0, 0, NO_NODE)).toBe(false);
    expect(random).not.toHaveBeenCalled();
  });

  it('accepts 0 for baseSleepMs and maxSleepMs', () => {
    expect(new ExponentialBackoffRetry({ baseSleepMs: 0, random: maxRandom }).allowRetry(2, 0, CONNECTION_LOSS)).toBe(0);
    expect(new ExponentialBackoffRetry({ maxSleepMs: 0, random: maxRandom }).allowRetry(2, 0, CONNECTION_LOSS)).toBe(0);
  });

  it.each([
    [{ baseSleepMs: -1 }, 'baseSleepMs must be a non-negative integer, got -1'],
    [{ baseSleepMs: NaN }, 'baseSleepMs must be a non-negative integer, got NaN'],
    [{ baseSleepMs: 1.5 }, 'baseSleepMs must be a non-negative integer, got 1.5'],
    [{ baseSleepMs: Infinity }, 'baseSleepMs must be a non-negative integer, got Infinity'],
    [{ baseSleepMs: '1000' }, 'baseSleepMs must be a non-negative integer, got "1000"'],
    [{ baseSleepMs: null }, 'baseSleepMs must be a non-negative integer, got null'],
    [{ maxRetries: -1 }, 'maxRetries must be a non-negative integer, got -1'],
    [{ maxRetries: NaN }, 'maxRetries must be a non-negative integer, got NaN'],
    [{ maxRetries: 2.5 }, 'maxRetries must be a non-negative integer, got 2.5'],
    [{ maxSleepMs: -1 }, 'maxSleepMs must be a non-negative integer or Infinity, got -1'],
    [{ maxSleepMs: NaN }, 'maxSleepMs must be a non-negative integer or Infinity, got NaN'],
    [{ maxSleepMs: -Infinity }, 'maxSleepMs must be a non-negative integer or Infinity, got -Infinity'],
    [{ maxSleepMs: '5' }, 'maxSleepMs must be a non-negative integer or Infinity, got "5"'],
    [{ random: 0.5 }, 'random must be a function, got 0.5'],
  ])('rejects %p', (options, message) => {
    expectInvalid(() => new ExponentialBackoffRetry(options as never), message);
  });

  it.each([
    [5, 'got 5'],
    [null, 'got null'],
    [[], 'got an array'],
  ])('rejects options %p', (options, got) => {
    expectInvalid(() => new ExponentialBackoffRetry(options as never), `ExponentialBackoffRetry options must be an object, ${got}`);
  });
});

describe('BoundedExponentialBackoffRetry', () => {
  it('defaults to 1000 ms and 3 retries', () => {
    const policy = new BoundedExponentialBackoffRetry({ maxSleepMs: 10_000 });
    expect(policy.baseSleepMs).toBe(1000);
    expect(policy.maxRetries).toBe(3);
    expect(policy.maxSleepMs).toBe(10_000);
    expect(policy).toBeInstanceOf(ExponentialBackoffRetry);
  });

  it('waits min(maxSleepMs, exponential delay)', () => {
    const high = new BoundedExponentialBackoffRetry({ baseSleepMs: 100, maxSleepMs: 500, maxRetries: 10, random: maxRandom });
    expect(high.allowRetry(0, 0, CONNECTION_LOSS)).toBe(100);
    expect(high.allowRetry(1, 0, CONNECTION_LOSS)).toBe(300);
    expect(high.allowRetry(2, 0, CONNECTION_LOSS)).toBe(500);
    expect(high.allowRetry(9, 0, CONNECTION_LOSS)).toBe(500);
    const low = new BoundedExponentialBackoffRetry({ baseSleepMs: 100, maxSleepMs: 500, maxRetries: 10, random: minRandom });
    expect(low.allowRetry(9, 0, CONNECTION_LOSS)).toBe(100);
  });

  it('allows exactly maxRetries retries, at most 29', () => {
    const three = new BoundedExponentialBackoffRetry({ maxSleepMs: 1, maxRetries: 3 });
    expect(three.allowRetry(2, 0, CONNECTION_LOSS)).toBe(1);
    expect(three.allowRetry(3, 0, CONNECTION_LOSS)).toBe(false);
    const many = new BoundedExponentialBackoffRetry({ maxSleepMs: 1, maxRetries: 50 });
    expect(many.maxRetries).toBe(29);
    expect(many.allowRetry(28, 0, CONNECTION_LOSS)).toBe(1);
    expect(many.allowRetry(29, 0, CONNECTION_LOSS)).toBe(false);
  });

  it.each([
    [{}, 'maxSleepMs must be a non-negative integer, got undefined'],
    [{ maxSleepMs: Infinity }, 'maxSleepMs must be a non-negative integer, got Infinity'],
    [{ maxSleepMs: -5 }, 'maxSleepMs must be a non-negative integer, got -5'],
    [{ maxSleepMs: NaN }, 'maxSleepMs must be a non-negative integer, got NaN'],
    [{ maxSleepMs: 100, baseSleepMs: -1 }, 'baseSleepMs must be a non-negative integer, got -1'],
    [{ maxSleepMs: 100, maxRetries: 'x' }, 'maxRetries must be a non-negative integer, got "x"'],
    [{ maxSleepMs: 100, random: 'x' }, 'random must be a function, got "x"'],
  ])('rejects %p', (options, message) => {
    expectInvalid(() => new BoundedExponentialBackoffRetry(options as never), message);
  });

  it('rejects missing options', () => {
    expectInvalid(
      () => new BoundedExponentialBackoffRetry(undefined as never),
      'maxSleepMs must be a non-negative integer, got undefined',
    );
    expectInvalid(
      () => new BoundedExponentialBackoffRetry('x' as never),
      'BoundedExponentialBackoffRetry options must be an object, got "x"',
    );
  });
});

describe('RetryNTimes', () => {
  it('waits sleepMsBetweenRetries before each of n retries, then gives up', () => {
    const policy = new RetryNTimes({ n: 3, sleepMsBetweenRetries: 250 });
    expect(policy.allowRetry(0, 0, CONNECTION_LOSS)).toBe(250);
    expect(policy.allowRetry(1, 10_000, CONNECTION_LOSS)).toBe(250);
    expect(policy.allowRetry(2, 0, CONNECTION_LOSS)).toBe(250);
    expect(policy.allowRetry(3, 0, CONNECTION_LOSS)).toBe(false);
  });

  it('allows no retry with n = 0 and accepts a zero delay', () => {
    expect(new RetryNTimes({ n: 0, sleepMsBetweenRetries: 5 }).allowRetry(0, 0, CONNECTION_LOSS)).toBe(false);
    expect(new RetryNTimes({ n: 1, sleepMsBetweenRetries: 0 }).allowRetry(0, 0, CONNECTION_LOSS)).toBe(0);
  });

  it('does not cap n', () => {
    expect(new RetryNTimes({ n: 100, sleepMsBetweenRetries: 5 }).allowRetry(99, 0, CONNECTION_LOSS)).toBe(5);
  });

  it.each([
    [{ sleepMsBetweenRetries: 5 }, 'n must be a non-negative integer, got undefined'],
    [{ n: -1, sleepMsBetweenRetries: 5 }, 'n must be a non-negative integer, got -1'],
    [{ n: NaN, sleepMsBetweenRetries: 5 }, 'n must be a non-negative integer, got NaN'],
    [{ n: 3 }, 'sleepMsBetweenRetries must be a non-negative integer, got undefined'],
    [{ n: 3, sleepMsBetweenRetries: -1 }, 'sleepMsBetweenRetries must be a non-negative integer, got -1'],
    [{ n: 3, sleepMsBetweenRetries: 0.5 }, 'sleepMsBetweenRetries must be a non-negative integer, got 0.5'],
  ])('rejects %p', (options, message) => {
    expectInvalid(() => new RetryNTimes(options as never), message);
  });

  it('rejects missing options', () => {
    expectInvalid(() => new RetryNTimes(undefined as never), 'n must be a non-negative integer, got undefined');
    expectInvalid(() => new RetryNTimes(null as never), 'RetryNTimes options must be an object, got null');
  });
});

describe('RetryOneTime', () => {
  it('retries once after sleepMsBetweenRetry', () => {
    const policy = new RetryOneTime({ sleepMsBetweenRetry: 75 });
    expect(policy).toBeInstanceOf(RetryNTimes);
    expect(policy.n).toBe(1);
    expect(policy.allowRetry(0, 0, CONNECTION_LOSS)).toBe(75);
    expect(policy.allowRetry(1, 0, CONNECTION_LOSS)).toBe(false);
  });

  it.each([
    [{}, 'sleepMsBetweenRetry must be a non-negative integer, got undefined'],
    [{ sleepMsBetweenRetry: -1 }, 'sleepMsBetweenRetry must be a non-negative integer, got -1'],
    [{ sleepMsBetweenRetry: NaN }, 'sleepMsBetweenRetry must be a non-negative integer, got NaN'],
    [{ sleepMsBetweenRetries: 5 }, 'sleepMsBetweenRetry must be a non-negative integer, got undefined'],
  ])('rejects %p', (options, message) => {
    expectInvalid(() => new RetryOneTime(options as never), message);
  });

  it('rejects non-object options', () => {
    expectInvalid(() => new RetryOneTime(5 as never), 'RetryOneTime options must be an object, got 5');
  });
});

describe('RetryForever', () => {
  it('always allows, with a constant delay', () => {
    const policy = new RetryForever({ retryIntervalMs: 1500 });
    expect(policy.allowRetry(0, 0, CONNECTION_LOSS)).toBe(1500);
    expect(policy.allowRetry(1_000_000, Number.MAX_SAFE_INTEGER, SESSION_EXPIRED)).toBe(1500);
  });

  it.each([
    [{ retryIntervalMs: 0 }, 'retryIntervalMs must be a positive integer, got 0'],
    [{ retryIntervalMs: -1 }, 'retryIntervalMs must be a positive integer, got -1'],
    [{ retryIntervalMs: NaN }, 'retryIntervalMs must be a positive integer, got NaN'],
    [{ retryIntervalMs: Infinity }, 'retryIntervalMs must be a positive integer, got Infinity'],
    [{}, 'retryIntervalMs must be a positive integer, got undefined'],
  ])('rejects %p', (options, message) => {
    expectInvalid(() => new RetryForever(options as never), message);
  });

  it('rejects non-object options', () => {
    expectInvalid(() => new RetryForever([] as never), 'RetryForever options must be an object, got an array');
  });
});

describe('RetryUntilElapsed', () => {
  it('allows while elapsedMs < maxElapsedTimeMs, whatever the retry count', () => {
    const policy = new RetryUntilElapsed({ maxElapsedTimeMs: 5000, sleepMsBetweenRetries: 200 });
    expect(policy.allowRetry(0, 0, CONNECTION_LOSS)).toBe(200);
    expect(policy.allowRetry(1_000_000, 4999, CONNECTION_LOSS)).toBe(200);
    expect(policy.allowRetry(0, 5000, CONNECTION_LOSS)).toBe(false);
    expect(policy.allowRetry(0, 5001, CONNECTION_LOSS)).toBe(false);
  });

  it('allows nothing with maxElapsedTimeMs 0', () => {
    expect(new RetryUntilElapsed({ maxElapsedTimeMs: 0, sleepMsBetweenRetries: 1 }).allowRetry(0, 0, CONNECTION_LOSS)).toBe(false);
  });

  it.each([
    [{ sleepMsBetweenRetries: 5 }, 'maxElapsedTimeMs must be a non-negative integer, got undefined'],
    [{ maxElapsedTimeMs: -1, sleepMsBetweenRetries: 5 }, 'maxElapsedTimeMs must be a non-negative integer, got -1'],
    [{ maxElapsedTimeMs: NaN, sleepMsBetweenRetries: 5 }, 'maxElapsedTimeMs must be a non-negative integer, got NaN'],
    [{ maxElapsedTimeMs: 10 }, 'sleepMsBetweenRetries must be a non-negative integer, got undefined'],
    [{ maxElapsedTimeMs: 10, sleepMsBetweenRetries: '5' }, 'sleepMsBetweenRetries must be a non-negative integer, got "5"'],
  ])('rejects %p', (options, message) => {
    expectInvalid(() => new RetryUntilElapsed(options as never), message);
  });

  it('rejects non-object options', () => {
    expectInvalid(() => new RetryUntilElapsed(true as never), 'RetryUntilElapsed options must be an object, got true');
  });
});

describe('SessionFailedRetryPolicy', () => {
  it('gives up on SESSIONEXPIRED even when the delegate would retry', () => {
    const delegate = new RetryForever({ retryIntervalMs: 10 });
    expect(delegate.allowRetry(0, 0, SESSION_EXPIRED)).toBe(10);
    expect(new SessionFailedRetryPolicy(delegate).allowRetry(0, 0, SESSION_EXPIRED)).toBe(false);
  });

  it('passes other retryable errors and its arguments to the delegate', () => {
    const allowRetry = jest.fn((): number | false => 42);
    const policy = new SessionFailedRetryPolicy({ allowRetry });
    const timeout = new ZkError('OPERATIONTIMEOUT', 'timeout');
    expect(policy.allowRetry(2, 300, timeout)).toBe(42);
    expect(allowRetry).toHaveBeenCalledWith(2, 300, timeout);
    expect(policy.allowRetry(0, 0, new ZkError('SESSIONMOVED', 'moved'))).toBe(42);
  });

  it('returns false when the delegate does', () => {
    const policy = new SessionFailedRetryPolicy(new RetryNTimes({ n: 2, sleepMsBetweenRetries: 10 }));
    expect(policy.allowRetry(1, 0, CONNECTION_LOSS)).toBe(10);
    expect(policy.allowRetry(2, 0, CONNECTION_LOSS)).toBe(false);
  });

  it('gives up on non-retryable errors without asking the delegate', () => {
    const allowRetry = jest.fn((): number | false => 42);
    const policy = new SessionFailedRetryPolicy({ allowRetry });
    expect(policy.allowRetry(0, 0, NO_NODE)).toBe(false);
    expect(policy.allowRetry(0, 0, new Error('x'))).toBe(false);
    expect(policy.allowRetry(0, 0, SESSION_EXPIRED)).toBe(false);
    expect(allowRetry).not.toHaveBeenCalled();
  });

  it.each([
    [undefined, 'undefined'],
    [null, 'null'],
    [{}, 'an object'],
    [{ allowRetry: 5 }, 'an object'],
    [() => 5, 'a function'],
  ])('rejects the delegate %p', (delegate, got) => {
    expectInvalid(
      () => new SessionFailedRetryPolicy(delegate as never),
      `delegate must be a RetryPolicy (an object with an allowRetry method), got ${got}`,
    );
  });
});
