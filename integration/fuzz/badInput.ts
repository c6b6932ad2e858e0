/**
 * Generators of bad input for the public API, built from ZooKeeper's own rules (not from our
 * validators), and the harness that judges what a call did with it.
 */
import fc from 'fast-check';
import { MAX_DATA_BYTES, ZkError } from '../../src';

/** A valid path segment. */
export const segment = fc.stringMatching(/^[a-z0-9_-]{1,8}$/);

/** Characters ZooKeeper refuses in a path (PathUtils.validatePath), NUL apart. */
const forbiddenChar = fc.oneof(
  fc.integer({ min: 0x01, max: 0x1f }),
  fc.integer({ min: 0x7f, max: 0x9f }),
  fc.integer({ min: 0xd800, max: 0xf8ff }),
  fc.integer({ min: 0xfff0, max: 0xffff }),
).map((code) => String.fromCharCode(code));

/** Strings that are not valid ZooKeeper paths, one way or another. */
export function invalidPath(root: string): fc.Arbitrary<string> {
  const segments = fc.array(segment, { minLength: 1, maxLength: 4 });
  return fc.oneof(
    fc.constant(''),
    fc.string({ minLength: 1, maxLength: 20 }).filter((s) => !s.startsWith('/')),
    segments.map((s) => `${root}/${s.join('/')}/`),
    fc.tuple(segments, segments).map(([a, b]) => `${root}/${a.join('/')}//${b.join('/')}`),
    fc.tuple(segments, fc.constantFrom('.', '..')).map(([a, rel]) => `${root}/${a.join('/')}/${rel}`),
    fc.tuple(segments, fc.constantFrom('.', '..'), segments).map(([a, rel, b]) => `${root}/${a.join('/')}/${rel}/${b.join('/')}`),
    fc.tuple(segment, fc.constantFrom('\u0000'), segment).map(([a, c, b]) => `${root}/${a}${c}${b}`),
    fc.tuple(segment, forbiddenChar, segment).map(([a, c, b]) => `${root}/${a}${c}${b}`),
  );
}

/** Paths that are valid but belong to the server: no recipe may live there. */
export const reservedPath = fc.oneof(fc.constant('/zookeeper'), segment.map((s) => `/zookeeper/${s}`), fc.constantFrom('/zookeeper/quota', '/zookeeper/config'));

/** Values of the wrong type for a string or an options object. */
export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.bigInt(),
  fc.constant(null),
  fc.constant(Symbol('bad')),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.constant(() => undefined),
);

/** Bad options objects: a value that is not an object, or an object whose known fields have the wrong type. */
export const badOptions: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.string({ minLength: 1, maxLength: 10 }),
  fc.constant(null),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 3 }),
);

/** Timeouts no wait can mean: negative, NaN, -Infinity, or not a number at all. */
export const badTimeout: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ max: -1 }),
  fc.double({ max: -Number.MIN_VALUE, noNaN: true }),
  fc.constant(Number.NaN),
  fc.constant(Number.NEGATIVE_INFINITY),
  fc.constant('1000'),
  fc.constant(null),
  fc.bigInt({ min: 1n, max: 10_000n }),
);

/** Finite timeouts beyond what a timer can hold (2^31 - 1 ms): they must mean "no limit", or be refused. */
export const hugeTimeout = fc.oneof(fc.constant(2 ** 31), fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }), fc.constant(Number.MAX_SAFE_INTEGER), fc.constant(Number.MAX_VALUE));

/** Payloads over MAX_DATA_BYTES: bytes, or text whose UTF-8 is over it. */
export const oversizedData: fc.Arbitrary<Buffer | string> = fc.oneof(
  fc.integer({ min: 1, max: 100_000 }).map((extra) => Buffer.alloc(MAX_DATA_BYTES + extra, 7)),
  fc.integer({ min: 1, max: 1_000 }).map((extra) => 'é'.repeat(Math.ceil(MAX_DATA_BYTES / 2) + extra)),
);

/** What a call did. */
export type Outcome =
  | { readonly how: 'threw'; readonly value: unknown }
  | { readonly how: 'rejected'; readonly value: unknown }
  | { readonly how: 'resolved'; readonly value: unknown }
  | { readonly how: 'returned'; readonly value: unknown }
  | { readonly how: 'pending'; readonly value: Promise<unknown> };

/**
 * Calls `call` and says what it did: threw synchronously, returned a promise that rejected or
 * resolved (or is still pending after `pendingAfterMs`), or returned something else. A call that
 * should have been refused may instead wait forever; the default bound keeps the fuzz moving.
 */
export async function outcomeOf(call: () => unknown, pendingAfterMs = 2_000): Promise<Outcome> {
  let result: unknown;
  try {
    result = call();
  } catch (err) {
    return { how: 'threw', value: err };
  }
  if (!(result instanceof Promise)) return { how: 'returned', value: result };
  const settled = result.then(
    (value): Outcome => ({ how: 'resolved', value }),
    (value: unknown): Outcome => ({ how: 'rejected', value }),
  );
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<Outcome>((resolve) => (timer = setTimeout(() => resolve({ how: 'pending', value: result as Promise<unknown> }), pendingAfterMs)));
  const first = await Promise.race([settled, pending]);
  clearTimeout(timer);
  return first;
}

/** A value in a few words, for failure messages. */
export function show(value: unknown): string {
  if (value instanceof Error) return `${value.name}${value instanceof ZkError ? ` (${value.code})` : ''}: ${value.message.slice(0, 160)}`;
  if (typeof value === 'symbol') return value.toString();
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return 'a function';
  if (value === undefined) return 'undefined';
  try {
    return String(JSON.stringify(value)).slice(0, 160);
  } catch {
    return String(value);
  }
}

/** Fails unless the call returned a promise that rejected with an error of class `expected`. */
export function expectRejection(what: string, outcome: Outcome, expected: abstract new (...args: never[]) => Error): void {
  if (outcome.how === 'threw') throw new Error(`${what} threw synchronously (${show(outcome.value)}) instead of returning a rejected promise`);
  if (outcome.how === 'pending') throw new Error(`${what} neither resolved nor rejected (it waits) instead of rejecting with ${expected.name}`);
  if (outcome.how !== 'rejected') throw new Error(`${what} ${outcome.how} (${show(outcome.value)}) instead of rejecting with ${expected.name}`);
  if (!(outcome.value instanceof expected)) throw new Error(`${what} rejected with ${show(outcome.value)}, not a ${expected.name}`);
}

/** Fails unless a constructor (or another synchronous call) threw an error of class `expected`; `accepted` is what it made otherwise. */
export function expectThrow(what: string, outcome: Outcome, expected: abstract new (...args: never[]) => Error): void {
  if (outcome.how !== 'threw') throw new Error(`${what} accepted it (${outcome.how}) instead of throwing ${expected.name}`);
  if (!(outcome.value instanceof expected)) throw new Error(`${what} threw ${show(outcome.value)}, not a ${expected.name}`);
}
