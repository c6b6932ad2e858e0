/** Atomic values: DistributedAtomicValue, DistributedAtomicLong and DistributedAtomicInteger, Curator-compatible. */
export { DistributedAtomicValue, type AtomicBytes, type MakeValue } from './DistributedAtomicValue';
export { DistributedAtomicNumber, type NumberCodec } from './DistributedAtomicNumber';
export { DistributedAtomicLong, LONG_CODEC, encodeLong, decodeLong } from './DistributedAtomicLong';
export { DistributedAtomicInteger, INT_CODEC, encodeInt, decodeInt } from './DistributedAtomicInteger';
export type { AtomicValue, AtomicStats } from './AtomicValue';
export { ATOMIC_DEFAULTS, type DistributedAtomicOptions, type PromotedToLock, type AtomicOperationOptions } from './options';
export { AtomicContentionError, AtomicValueCorruptError } from './errors';
