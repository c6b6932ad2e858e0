import { InvalidArgumentError } from '../errors';
import { describeValue, validateFunction, validateOptions, validatePositiveInt } from '../validate';
import { SleepingRetry } from './SleepingRetry';

/** Options of {@link ExponentialBackoffRetry}; defaults in {@link ExponentialBackoffRetry.DEFAULTS}. */
export interface ExponentialBackoffRetryOptions {
  /** Unit of the backoff in ms, a non-negative integer; default 1000. */
  baseSleepMs?: number;
  /** Retries allowed, a non-negative integer; default 3; values above 29 are lowered to 29. */
  maxRetries?: number;
  /** Longest delay returned, a non-negative integer or Infinity; default Infinity. */
  maxSleepMs?: number;
  /** Source of randomness in [0, 1); default Math.random. */
  random?: () => number;
}

/**
 * Retries up to `maxRetries` times, after a random delay whose range doubles on each retry:
 * before retry `k` (0-based) it waits `baseSleepMs * max(1, r)` ms, `r` a random integer in
 * `[0, 2^(k+1))`, and never more than `maxSleepMs`. Gives up at once on non-retryable errors.
 *
 * With `maxSleepMs` left at Infinity, late retries can ask for very long delays (up to
 * `baseSleepMs * (2^29 - 1)` ms); set `maxSleepMs`, or use {@link BoundedExponentialBackoffRetry}.
 */
export class ExponentialBackoffRetry extends SleepingRetry {
  /** The default options. */
  static readonly DEFAULTS = Object.freeze({ baseSleepMs: 1000, maxRetries: 3, maxSleepMs: Infinity });

  /** The most retries allowed; a larger `maxRetries` is lowered to it, so `2^(k+1)` stays small. */
  static readonly MAX_RETRIES_LIMIT = 29;

  readonly baseSleepMs: number;
  /** The effective limit, after lowering to {@link ExponentialBackoffRetry.MAX_RETRIES_LIMIT}. */
  readonly maxRetries: number;
  readonly maxSleepMs: number;
  private readonly random: () => number;

  /** @throws InvalidArgumentError naming the first invalid option. */
  constructor(options?: ExponentialBackoffRetryOptions) {
    const opts = validateOptions(options, 'ExponentialBackoffRetry options');
    const defaults = ExponentialBackoffRetry.DEFAULTS;
    // Only undefined selects a default: null, like any other non-number, is refused.
    const baseSleepMs = validatePositiveInt(
      opts.baseSleepMs === undefined ? defaults.baseSleepMs : opts.baseSleepMs,
      'baseSleepMs',
      { min: 0 },
    );
    const maxRetries = validatePositiveInt(
      opts.maxRetries === undefined ? defaults.maxRetries : opts.maxRetries,
      'maxRetries',
      { min: 0 },
    );
    const maxSleepMs = validateMaxSleepMs(opts.maxSleepMs === undefined ? defaults.maxSleepMs : opts.maxSleepMs);
    const random = opts.random === undefined ? Math.random : validateFunction(opts.random, 'random');
    super();
    this.baseSleepMs = baseSleepMs;
    this.maxRetries = Math.min(maxRetries, ExponentialBackoffRetry.MAX_RETRIES_LIMIT);
    this.maxSleepMs = maxSleepMs;
    this.random = random;
  }

  protected override withinLimits(retryCount: number): boolean {
    return retryCount < this.maxRetries;
  }

  protected override sleepMs(retryCount: number): number {
    const delay = this.baseSleepMs * Math.max(1, this.randomBelow(2 ** (retryCount + 1)));
    return delay > this.maxSleepMs ? this.maxSleepMs : delay;
  }

  /** A random integer in [0, bound), robust to a `random` that strays outside [0, 1). */
  private randomBelow(bound: number): number {
    const r = this.random();
    if (!Number.isFinite(r) || r <= 0) return 0;
    return Math.min(bound - 1, Math.floor(r * bound));
  }
}

function validateMaxSleepMs(value: unknown): number {
  if (value === Infinity) return value;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new InvalidArgumentError(
      `maxSleepMs must be a non-negative integer or Infinity, got ${describeValue(value)}`,
    );
  }
  return value;
}
