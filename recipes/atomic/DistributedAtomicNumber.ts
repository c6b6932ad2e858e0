import { validateOptions, type ZkClient } from '../../src/recipeKit';
import type { AtomicStats, AtomicValue } from './AtomicValue';
import { DistributedAtomicValue } from './DistributedAtomicValue';
import { operationSignal, type AtomicOperationOptions, type DistributedAtomicOptions } from './options';

/** How a number is written into its node, and added. */
export interface NumberCodec<T> {
  /** Refuses what is not such a number. @throws InvalidArgumentError */
  check(value: unknown, name: string): T;
  encode(value: T): Buffer;
  /** Reads the node's bytes; null (no node) and empty data read as zero. @throws AtomicValueCorruptError */
  decode(bytes: Buffer | null, path: string): T;
  /** Adds with the wrap-around of the Java type. */
  add(a: T, b: T): T;
  negate(a: T): T;
  readonly one: T;
}

/**
 * A number's outcome over the bytes' outcome, read when it is made: a node whose bytes are no such
 * number rejects the operation with AtomicValueCorruptError, rather than resolving to an outcome
 * whose values throw when read.
 */
class NumberOutcome<T> implements AtomicValue<T> {
  readonly succeeded: boolean;
  readonly preValue: T;
  readonly postValue: T;
  readonly stats: AtomicStats;

  constructor(bytes: AtomicValue<Buffer | null>, codec: NumberCodec<T>, path: string) {
    this.succeeded = bytes.succeeded;
    this.preValue = codec.decode(bytes.preValue, path);
    this.postValue = codec.decode(bytes.postValue, path);
    this.stats = bytes.stats;
    Object.freeze(this);
  }
}

/**
 * A number shared through one node, updated atomically: Curator's DistributedAtomicNumber, on a
 * DistributedAtomicValue whose bytes are the number in big-endian order. The subclasses fix the
 * width: 8 bytes (DistributedAtomicLong, a bigint) or 4 (DistributedAtomicInteger). A node that
 * does not exist, or holds no bytes, reads as 0. A node with fewer bytes than the width is
 * corrupt: every operation but `forceSet` (the way to repair it) rejects with an
 * AtomicValueCorruptError and writes nothing. (Curator's `trySet` overwrites such a node, and its
 * `get` succeeds with values that throw when read.) Sums wrap around as Java's long and int do.
 */
export abstract class DistributedAtomicNumber<T> {
  readonly client: ZkClient;
  readonly path: string;
  private readonly value: DistributedAtomicValue;

  /** @internal Built by DistributedAtomicLong and DistributedAtomicInteger, with their codec. */
  protected constructor(
    private readonly codec: NumberCodec<T>,
    client: ZkClient,
    path: string,
    options: DistributedAtomicOptions = {},
  ) {
    this.value = new DistributedAtomicValue(client, path, validateOptions(options, 'options'));
    this.client = this.value.client;
    this.path = this.value.path;
  }

  /** The current value (0 when never set). Succeeds unless the node is corrupt. @throws AtomicValueCorruptError */
  async get(options?: AtomicOperationOptions): Promise<AtomicValue<T>> {
    return this.map(await this.value.get(options));
  }

  /** Sets the value whatever it is, a corrupt one included. No atomicity. */
  async forceSet(newValue: T, options?: AtomicOperationOptions): Promise<void> {
    await this.value.forceSet(this.encode(newValue, 'newValue'), options);
  }

  /** Sets the value to `newValue` only if it is now `expectedValue`, in one attempt. */
  async compareAndSet(expectedValue: T, newValue: T, options?: AtomicOperationOptions): Promise<AtomicValue<T>> {
    const expected = this.encode(expectedValue, 'expectedValue');
    return this.map(await this.value.compareAndSet(expected, this.encode(newValue, 'newValue'), options));
  }

  /**
   * Sets the value with compare-and-set attempts (and the promoted lock, if configured). Over a
   * corrupt node it rejects and writes nothing. @throws AtomicValueCorruptError
   */
  async trySet(newValue: T, options?: AtomicOperationOptions): Promise<AtomicValue<T>> {
    const bytes = this.encode(newValue, 'newValue');
    const { codec, path } = this;
    return this.map(
      await this.value.update((previous) => {
        codec.decode(previous, path);
        return bytes;
      }, options),
    );
  }

  /** Sets the value only if the node does not exist yet; true if it did so. */
  async initialize(value: T, options?: AtomicOperationOptions): Promise<boolean> {
    return this.value.initialize(this.encode(value, 'value'), options);
  }

  /** Adds 1; `postValue` is the new value. */
  async increment(options?: AtomicOperationOptions): Promise<AtomicValue<T>> {
    return this.addChecked(this.codec.one, options);
  }

  /** Subtracts 1. */
  async decrement(options?: AtomicOperationOptions): Promise<AtomicValue<T>> {
    return this.addChecked(this.codec.negate(this.codec.one), options);
  }

  /** Adds `delta`. */
  async add(delta: T, options?: AtomicOperationOptions): Promise<AtomicValue<T>> {
    return this.addChecked(this.codec.check(delta, 'delta'), options);
  }

  /** Subtracts `delta`. */
  async subtract(delta: T, options?: AtomicOperationOptions): Promise<AtomicValue<T>> {
    return this.addChecked(this.codec.negate(this.codec.check(delta, 'delta')), options);
  }

  private async addChecked(delta: T, options: AtomicOperationOptions | undefined): Promise<AtomicValue<T>> {
    operationSignal(options);
    const { codec, path } = this;
    return this.map(await this.value.update((previous) => codec.encode(codec.add(codec.decode(previous, path), delta)), options));
  }

  private encode(value: T, name: string): Buffer {
    return this.codec.encode(this.codec.check(value, name));
  }

  private map(bytes: AtomicValue<Buffer | null>): AtomicValue<T> {
    return new NumberOutcome(bytes, this.codec, this.path);
  }
}
