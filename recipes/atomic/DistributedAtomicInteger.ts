import { validatePositiveInt, type ZkClient } from '../../src/recipeKit';
import { encodeCount } from '../shared/SharedCount';
import { DistributedAtomicNumber, type NumberCodec } from './DistributedAtomicNumber';
import { AtomicValueCorruptError } from './errors';
import type { DistributedAtomicOptions } from './options';

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** An int as Curator's DistributedAtomicInteger (and SharedCount) writes it: 4 bytes, big-endian. */
export function encodeInt(value: number): Buffer {
  return encodeCount(value);
}

/** Reads Curator's 4-byte int: no bytes read as 0; bytes past the fourth are ignored. @throws AtomicValueCorruptError */
export function decodeInt(bytes: Buffer | null, path?: string): number {
  if (bytes === null || bytes.length === 0) return 0;
  if (bytes.length < 4) throw new AtomicValueCorruptError(bytes, { path });
  return bytes.readInt32BE(0);
}

/** The codec of DistributedAtomicInteger. */
export const INT_CODEC: NumberCodec<number> = Object.freeze({
  check: (value: unknown, name: string) => validatePositiveInt(value, name, { min: INT32_MIN, max: INT32_MAX }),
  encode: encodeInt,
  decode: (bytes: Buffer | null, path: string) => decodeInt(bytes, path),
  // `| 0` wraps at 32 bits, as Java's int addition does.
  add: (a: number, b: number) => (a + b) | 0,
  negate: (a: number) => -a | 0,
  one: 1,
});

/**
 * An int shared through one node, wire-compatible with Curator's DistributedAtomicInteger: 4 bytes,
 * big-endian, the layout of SharedCount too, so both can share a node. See DistributedAtomicValue
 * for the guarantees and the behaviour on SUSPENDED and LOST. Always check `succeeded`. Sums wrap
 * around at 32 bits, as Java's do.
 */
export class DistributedAtomicInteger extends DistributedAtomicNumber<number> {
  constructor(client: ZkClient, path: string, options: DistributedAtomicOptions = {}) {
    super(INT_CODEC, client, path, options);
  }
}
