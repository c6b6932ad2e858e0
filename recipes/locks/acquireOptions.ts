import { describeValue, InvalidArgumentError, validateOptions, validateSignal, validateTimeout } from '../../src/recipeKit';
import { DEFAULT_ATTEMPT_TIMEOUT_MS, DEFAULT_TRY_TIMEOUT_MS, type AcquireOptions, type TryAcquireOptions } from './InterProcessLock';
import { SimpleLease, type Lease } from './Lease';

/** Checked acquire options. */
export interface CheckedAcquire {
  readonly timeoutMs: number | undefined;
  readonly attemptTimeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly reenter: Lease | undefined;
}

/** Checks acquire options before any I/O. */
export function checkAcquireOptions(options: AcquireOptions | undefined): CheckedAcquire {
  const o = validateOptions(options, 'options');
  const reenter = o.reenter;
  if (reenter !== undefined && !(reenter instanceof SimpleLease)) throw new InvalidArgumentError(`reenter must be a lease of this lock, got ${describeValue(reenter)}`);
  return {
    timeoutMs: validateTimeout(o.timeoutMs, 'timeoutMs'),
    attemptTimeoutMs: validateTimeout(o.attemptTimeoutMs, 'attemptTimeoutMs') ?? DEFAULT_ATTEMPT_TIMEOUT_MS,
    signal: validateSignal(o.signal),
    reenter,
  };
}

/** Checks tryAcquire options before any I/O; the timeout defaults to DEFAULT_TRY_TIMEOUT_MS. */
export function checkTryOptions(options: TryAcquireOptions | undefined): CheckedAcquire & { timeoutMs: number } {
  const checked = checkAcquireOptions(options);
  return { ...checked, timeoutMs: checked.timeoutMs ?? DEFAULT_TRY_TIMEOUT_MS };
}
