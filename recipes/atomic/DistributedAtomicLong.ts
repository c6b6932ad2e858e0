import { describeValue, InvalidArgumentError, type ZkClient } from '../../src/recipeKit';
import { DistributedAtomicNumber, type NumberCodec } from './DistributedAtomicNumber';
import { AtomicValueCorruptError } from './errors';
import type { DistributedAtomicOptions } from './options';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A long as Curator's DistributedAtomicLong writes it: 8 bytes, big-endian, two's complement. */
export function encodeLong(value: bigint): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigInt64BE(value);
  return bytes;
}

/** Reads Curator's 8-byte long: no bytes read as 0; bytes past the eighth are ignored, as Curator does. @throws AtomicValueCorruptError */
export function decodeLong(bytes: Buffer | null, path?: string): bigint {
  if (bytes === null || bytes.length === 0) return 0n;
  if (bytes.length < 8) throw new AtomicValueCorruptError(bytes, { path });
  return bytes.readBigInt64BE(0);
}

/** The codec of DistributedAtomicLong. A safe-integer number is taken as a bigint. */
export const LONG_CODEC: NumberCodec<bigint> = Object.freeze({
  check(value: unknown, name: string): bigint {
    const big = typeof value === 'number' && Number.isSafeInteger(value) ? BigInt(value) : value;
    if (typeof big !== 'bigint' || big < INT64_MIN || big > INT64_MAX) {
      throw new InvalidArgumentError(`${name} must be a 64-bit signed integer (a bigint, or a safe integer), got ${describeValue(value)}`);
    }
    return big;
  },
  encode: encodeLong,
  decode: (bytes: Buffer | null, path: string) => decodeLong(bytes, path),
  add: (a: bigint, b: bigint) => BigInt.asIntN(64, a + b),
  negate: (a: bigint) => BigInt.asIntN(64, -a),
  one: 1n,
});

/**
 * A counter shared through one node, wire-compatible with Curator's DistributedAtomicLong: the
 * node holds the value as 8 bytes, big-endian; values are bigints (a safe-integer number is
 * accepted as input). Updates are compare-and-set attempts, optimistic first, optionally promoted
 * to a lock: see DistributedAtomicValue for the guarantees and the behaviour on SUSPENDED and
 * LOST. Always check `succeeded`. Sums wrap around at 64 bits, as Java's do.
 *
 * @example
 * ```ts
 * const hits = new DistributedAtomicLong(client, '/stats/hits', { retryPolicy: new RetryNTimes({ n: 20, sleepMsBetweenRetries: 5 }) });
 * const result = await hits.increment();
 * if (result.succeeded) console.log('now', result.postValue); // a bigint
 * ```
 */
export class DistributedAtomicLong extends DistributedAtomicNumber<bigint> {
  constructor(client: ZkClient, path: string, options: DistributedAtomicOptions = {}) {
    super(LONG_CODEC, client, path, options);
  }
}
