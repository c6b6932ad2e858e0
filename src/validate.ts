/**
 * Argument checks run before any I/O. Each either returns the (possibly normalised) value or throws
 * an {@link InvalidArgumentError} whose message names the argument and shows what was given.
 */
import { InvalidArgumentError } from './errors';

/**
 * The largest payload zk-recipes accepts for a znode, in bytes: ZooKeeper's default packet limit
 * (`jute.maxbuffer` = 0xfffff, i.e. 1 MiB - 1 byte) less 1 KiB kept free for the request's header,
 * path and ACL. A payload within this limit therefore never makes the server drop the connection
 * for an oversized packet (with the default server configuration).
 */
export const MAX_DATA_BYTES = 1_047_552;

const MAX_DESCRIBED_STRING = 60;

/**
 * A short, human-readable rendering of any value for error messages: numbers as written (`NaN`,
 * `-1`, `Infinity`), strings quoted and truncated, `null`, `undefined`, and a type word
 * ("an object", "an array", "a function", …) for the rest. Never throws.
 */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'string': {
      const shown = value.length > MAX_DESCRIBED_STRING ? `${value.slice(0, MAX_DESCRIBED_STRING)}…` : value;
      return JSON.stringify(shown);
    }
    case 'bigint':
      return `${value}n`;
    case 'boolean':
      return String(value);
    case 'undefined':
      return 'undefined';
    case 'symbol':
      return 'a symbol';
    case 'function':
      return 'a function';
    default:
      if (value === null) return 'null';
      if (Array.isArray(value)) return 'an array';
      return 'an object';
  }
}

/**
 * Converts a znode payload to a Buffer.
 * - `undefined` and `null` give an empty Buffer;
 * - a Buffer is returned as is; any other Uint8Array is wrapped without copying (the result shares
 *   its memory);
 * - a string is encoded as UTF-8.
 *
 * @param what how the payload is named in error messages.
 * @param sizeChecked false for data that is compressed before it is sent: the limit is then the
 *   request's, checked on the compressed bytes.
 * @throws InvalidArgumentError for any other type, or when the payload is longer than
 *   {@link MAX_DATA_BYTES}.
 */
export function toData(data: unknown, what = 'data', sizeChecked = true): Buffer {
  if (data === undefined || data === null) return Buffer.alloc(0);
  if (typeof data === 'string') {
    // Measured before encoding so that an oversized string is rejected without being copied.
    if (sizeChecked) checkDataSize(Buffer.byteLength(data, 'utf8'), what);
    return Buffer.from(data, 'utf8');
  }
  if (data instanceof Uint8Array) {
    if (sizeChecked) checkDataSize(data.byteLength, what);
    return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }
  throw new InvalidArgumentError(
    `${what} must be a Buffer, a Uint8Array, a string, null or undefined, got ${describeValue(data)}`,
  );
}

function checkDataSize(bytes: number, what: string): void {
  if (bytes > MAX_DATA_BYTES) {
    throw new InvalidArgumentError(
      `${what} is ${bytes} bytes, more than the limit of ${MAX_DATA_BYTES} bytes`,
    );
  }
}

/**
 * Checks an optional timeout or delay in milliseconds: `undefined` (returned as is), or a number
 * that is not NaN and is >= 0. `Infinity` is accepted and means "no limit".
 *
 * @throws InvalidArgumentError e.g. "timeoutMs must be a non-negative number, got NaN".
 */
export function validateTimeout(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new InvalidArgumentError(`${name} must be a non-negative number, got ${describeValue(value)}`);
  }
  return value;
}

/** Bounds for {@link validatePositiveInt}; both inclusive. */
export interface IntRange {
  /** Smallest accepted value; default 1. */
  min?: number;
  /** Largest accepted value; default Number.MAX_SAFE_INTEGER. */
  max?: number;
}

/**
 * Checks that `value` is an integer (a number with no fractional part, hence finite) within
 * `[min, max]` (default `[1, Number.MAX_SAFE_INTEGER]`) and returns it (`-0` is returned as `0`).
 *
 * @throws InvalidArgumentError e.g. "maxRetries must be a non-negative integer, got -1".
 */
export function validatePositiveInt(value: unknown, name: string, range: IntRange = {}): number {
  const min = range.min ?? 1;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${name} must be ${describeRange(min, max)}, got ${describeValue(value)}`);
  }
  return value + 0;
}

function describeRange(min: number, max: number): string {
  if (max < Number.MAX_SAFE_INTEGER) return `an integer between ${min} and ${max}`;
  if (min === 0) return 'a non-negative integer';
  if (min === 1) return 'a positive integer';
  return `an integer >= ${min}`;
}

/**
 * Checks an optional abort signal: `undefined` (returned as is) or an `AbortSignal`.
 *
 * @throws InvalidArgumentError e.g. "signal must be an AbortSignal, got an object".
 */
export function validateSignal(value: unknown): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof AbortSignal)) {
    throw new InvalidArgumentError(`signal must be an AbortSignal, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Checks that `value` is a function and returns it, keeping its static type when it has one.
 *
 * @throws InvalidArgumentError e.g. "listener must be a function, got undefined".
 */
export function validateFunction<F extends (...args: never[]) => unknown>(value: F, name: string): F;
export function validateFunction(value: unknown, name: string): (...args: unknown[]) => unknown;
export function validateFunction(value: unknown, name: string): (...args: unknown[]) => unknown {
  if (typeof value !== 'function') {
    throw new InvalidArgumentError(`${name} must be a function, got ${describeValue(value)}`);
  }
  return value as (...args: unknown[]) => unknown;
}

/** Options of {@link validateString}. */
export interface StringOptions {
  /** Whether '' is accepted; default false. */
  allowEmpty?: boolean;
}

/**
 * Checks that `value` is a string, and non-empty unless `allowEmpty`, and returns it.
 *
 * @throws InvalidArgumentError e.g. "id must be a string, got 5" or "id must not be empty".
 */
export function validateString(value: unknown, name: string, options: StringOptions = {}): string {
  if (typeof value !== 'string') {
    throw new InvalidArgumentError(`${name} must be a string, got ${describeValue(value)}`);
  }
  if (value === '' && options.allowEmpty !== true) {
    throw new InvalidArgumentError(`${name} must not be empty`);
  }
  return value;
}

/**
 * Checks that `value` is a boolean and returns it (no truthiness coercion).
 *
 * @throws InvalidArgumentError e.g. "recursive must be a boolean, got \"yes\"".
 */
export function validateBoolean(value: unknown, name: string): boolean {
  if (typeof value !== 'boolean') {
    throw new InvalidArgumentError(`${name} must be a boolean, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Checks an optional options argument: `undefined` gives `{}`; otherwise it must be a non-null,
 * non-array object, which is returned as is.
 *
 * @throws InvalidArgumentError e.g. "options must be an object, got 5".
 */
export function validateOptions<T extends object>(value: T | undefined, name: string): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(`${name} must be an object, got ${describeValue(value)}`);
  }
  return value;
}
