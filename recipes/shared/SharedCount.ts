import { EventEmitter } from 'node:events';
import debug from 'debug';
import { emitSafely, IllegalStateError, validateClient, validatePositiveInt, validateRecipePath, type ZkClient } from '../../src/recipeKit';
import { AtomicValueCorruptError } from '../atomic/errors';
import { SharedValue } from './SharedValue';

const log = debug('zk-recipes:shared:count');

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** A count with the node version it was read at, for `trySetCount`. */
export interface VersionedCount {
  readonly count: number;
  /** The node's data version; -1 before `start()` has read it. */
  readonly version: number;
}

/** Called with the new count and its version whenever this object sees a newer version. */
export type SharedCountListener = (count: number, version: number) => void;

/** The count as Curator's SharedCount stores it: a 4-byte big-endian signed int. */
export function encodeCount(count: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(count);
  return bytes;
}

/**
 * Reads Curator's 4-byte big-endian int. Like Curator, bytes past the fourth are ignored, and
 * fewer bytes (none included: a count has no default) are no count.
 *
 * @throws AtomicValueCorruptError when there are fewer than 4 bytes.
 */
export function decodeCount(bytes: Buffer, path?: string): number {
  if (bytes.length < 4) throw new AtomicValueCorruptError(bytes, { path });
  return bytes.readInt32BE(0);
}

function validateCount(value: unknown, name: string): number {
  return validatePositiveInt(value, name, { min: INT32_MIN, max: INT32_MAX });
}

/** The events of a SharedCount. */
export interface SharedCountEvents {
  /** A newer value was seen: the count, and the node version it was read at. */
  changed: [count: number, version: number];
}

/**
 * An int shared through one node, wire-compatible with Curator's SharedCount: the node at `path`
 * holds the count as a 4-byte big-endian int, and updates are checked against the node's version.
 * It is a SharedValue with an int codec, and follows the node as a SharedValue does.
 *
 * - `start()` creates the node with the seed if it is missing (parents as persistent nodes, as
 *   Curator's SharedValue does) and reads it; a node that exists keeps its value.
 * - `getCount()` is the last count seen: a NodeWatch keeps it current and emits 'changed' once per
 *   newer value. A node deleted and created again is followed: it is a newer value even though its
 *   version starts again at 0, and `trySetCount` works against the new node's version.
 * - **Corrupt data.** A node holding fewer than 4 bytes is no count: `start()` rejects with an
 *   AtomicValueCorruptError (and the SharedCount is closed), and while the node seen last is corrupt `getCount()` and
 *   `getVersionedValue()` throw it and `trySetCount` rejects with it; nothing is written over it
 *   but by `setCount`, or `trySetCount` at the corrupt node's version.
 * - **SUSPENDED / LOST.** The count may be stale while disconnected. After a reconnect that could
 *   not keep the watch, and in a new session after LOST, the node is read again and watched again.
 *
 * @example
 * ```ts
 * const limit = new SharedCount(client, '/config/workers', 4);
 * await limit.start();
 * limit.on('changed', (count) => console.log('now', count));
 * const { version } = limit.getVersionedValue();
 * await limit.trySetCount(8, version);
 * ```
 */
export class SharedCount extends EventEmitter<SharedCountEvents> {
  readonly client: ZkClient;
  readonly path: string;
  /** The node, its watch and its versions; this class adds the int codec. */
  private readonly shared: SharedValue;
  private value: VersionedCount;
  private lifecycle: 'LATENT' | 'STARTED' | 'CLOSED' = 'LATENT';
  /** Set while the node seen last holds no count. */
  private corrupt: AtomicValueCorruptError | undefined;

  constructor(client: ZkClient, path: string, seedValue: number) {
    super();
    this.client = validateClient(client, 'SharedCount');
    this.path = validateRecipePath(this.client, path, 'shared count');
    const seed = validateCount(seedValue, 'seedValue');
    this.value = { count: seed, version: -1 };
    this.shared = new SharedValue(this.client, this.path, encodeCount(seed));
    this.shared.on('changed', (bytes, version) => this.seen(bytes, version));
  }

  /** Creates the node with the seed if it is missing, then reads and watches it. Starts once. */
  async start(): Promise<void> {
    if (this.lifecycle !== 'LATENT') throw new IllegalStateError(`a SharedCount starts once (it is ${this.lifecycle})`, { path: this.path });
    this.lifecycle = 'STARTED';
    await this.shared.start();
    if (this.corrupt) {
      const err = this.corrupt;
      this.close();
      throw err;
    }
  }

  /** The last count seen (the seed before `start()`). @throws AtomicValueCorruptError while the node holds no count. */
  getCount(): number {
    return this.getVersionedValue().count;
  }

  /** The last count seen and the version it was read at. @throws AtomicValueCorruptError while the node holds no count. */
  getVersionedValue(): VersionedCount {
    if (this.corrupt) throw this.corrupt;
    return this.value;
  }

  /** Sets the count whatever its version. */
  async setCount(newCount: number): Promise<void> {
    const count = validateCount(newCount, 'newCount');
    this.assertStarted();
    await this.shared.setValue(encodeCount(count));
  }

  /**
   * Sets the count only if the node is still at `expectedVersion` (from `getVersionedValue()`).
   * Resolves false when someone changed it since; the count seen is then the newer one (read
   * again unless it was already newer), and a node found corrupt then rejects with
   * AtomicValueCorruptError.
   */
  async trySetCount(newCount: number, expectedVersion: number): Promise<boolean> {
    const count = validateCount(newCount, 'newCount');
    const version = validatePositiveInt(expectedVersion, 'expectedVersion', { min: 0, max: INT32_MAX });
    this.assertStarted();
    // The caller holds a version, not bytes: the bytes are the ones seen, which are compared only
    // when their version is the one expected.
    if (await this.shared.trySetValue({ value: this.shared.getValue(), version }, encodeCount(count))) return true;
    if (this.corrupt) throw this.corrupt;
    return false;
  }

  /** Stops watching and drops the listeners. The node stays. Idempotent. */
  close(): void {
    this.lifecycle = 'CLOSED';
    this.shared.close();
    this.removeAllListeners();
  }

  private assertStarted(): void {
    if (this.lifecycle !== 'STARTED') throw new IllegalStateError(`the SharedCount is ${this.lifecycle}: call start() first`, { path: this.path });
  }

  /** Each newer value the SharedValue sees, decoded. */
  private seen(bytes: Buffer, version: number): void {
    let count: number;
    try {
      count = decodeCount(bytes, this.path);
    } catch (err) {
      // Kept as the newest version seen, so that the count seen before it is not trusted again.
      log('%s: version %d holds no count: %s', this.path, version, String(err));
      this.corrupt = err as AtomicValueCorruptError;
      this.value = { count: this.value.count, version };
      return;
    }
    this.corrupt = undefined;
    this.value = { count, version };
    log('%s: count %d at version %d', this.path, count, version);
    emitSafely(this, 'changed', [count, version], (format, ...values) => log(`%s: ${format}`, this.path, ...values));
  }
}
