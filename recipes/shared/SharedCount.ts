import { EventEmitter } from 'node:events';
import debug from 'debug';
import {
  emitSafely,
  IllegalStateError,
  isZkError,
  type NodeData,
  NodeWatch,
  validateClient,
  validatePositiveInt,
  validateRecipePath,
  type ZkClient,
} from '../../src/recipeKit';
import { AtomicValueCorruptError } from '../atomic/errors';

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
  private readonly seed: number;
  private value: VersionedCount;
  /** The czxid of the node the value was read from: a re-created node is a new one, whatever its version. */
  private czxid = -1n;
  private lifecycle: 'LATENT' | 'STARTED' | 'CLOSED' = 'LATENT';
  private watch: NodeWatch | undefined;
  /** Set while the node seen last holds no count. */
  private corrupt: AtomicValueCorruptError | undefined;

  constructor(client: ZkClient, path: string, seedValue: number) {
    super();
    this.client = validateClient(client, 'SharedCount');
    this.path = validateRecipePath(this.client, path, 'shared count');
    this.seed = validateCount(seedValue, 'seedValue');
    this.value = { count: this.seed, version: -1 };
  }

  /** Creates the node with the seed if it is missing, then reads and watches it. Starts once. */
  async start(): Promise<void> {
    if (this.lifecycle !== 'LATENT') throw new IllegalStateError(`a SharedCount starts once (it is ${this.lifecycle})`, { path: this.path });
    this.lifecycle = 'STARTED';
    try {
      await this.client.create(this.path, { data: encodeCount(this.seed), createParents: 'persistent' });
    } catch (err) {
      if (!isZkError(err, 'NODEEXISTS')) throw err;
    }
    this.watch = new NodeWatch(this.client, this.path, (node) => this.seen(node), {
      onError: (err) => log('%s: reading the count failed, again later: %s', this.path, String(err)),
    });
    this.seen(await this.watch.start());
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
    const stat = await this.client.setData(this.path, encodeCount(count));
    this.update(count, stat.version, stat.czxid);
  }

  /**
   * Sets the count only if the node is still at `expectedVersion` (from `getVersionedValue()`).
   * Resolves false when someone changed it since; the count seen is then read again, and a node
   * found corrupt then rejects with AtomicValueCorruptError.
   */
  async trySetCount(newCount: number, expectedVersion: number): Promise<boolean> {
    const count = validateCount(newCount, 'newCount');
    const version = validatePositiveInt(expectedVersion, 'expectedVersion', { min: 0, max: INT32_MAX });
    this.assertStarted();
    try {
      const stat = await this.client.setData(this.path, encodeCount(count), { version });
      this.update(count, stat.version, stat.czxid);
      return true;
    } catch (err) {
      if (!isZkError(err, 'BADVERSION')) throw err;
    }
    this.seen(await this.client.getData(this.path));
    if (this.corrupt) throw this.corrupt;
    return false;
  }

  /** Stops watching and drops the listeners. The node stays. Idempotent. */
  close(): void {
    this.lifecycle = 'CLOSED';
    void this.watch?.close();
    this.removeAllListeners();
  }

  private assertStarted(): void {
    if (this.lifecycle !== 'STARTED') throw new IllegalStateError(`the SharedCount is ${this.lifecycle}: call start() first`, { path: this.path });
  }

  private seen(node: NodeData | null): void {
    // Deleted: the count seen stays until the node comes back (the watch waits for it).
    if (node === null) return;
    const { version, czxid } = node.stat;
    if (czxid === this.czxid && version <= this.value.version) return;
    let count: number;
    try {
      count = decodeCount(node.data, this.path);
    } catch (err) {
      // Kept as the newest version seen, so that the count seen before it is not trusted again.
      log('%s: version %d holds no count: %s', this.path, version, String(err));
      this.corrupt = err as AtomicValueCorruptError;
      this.czxid = czxid;
      this.value = { count: this.value.count, version };
      return;
    }
    this.update(count, version, czxid);
  }

  /** Keeps a value newer than the last one: a later version of the same node, or another node. */
  private update(count: number, version: number, czxid: bigint): void {
    if (czxid === this.czxid && version <= this.value.version) return;
    this.czxid = czxid;
    this.corrupt = undefined;
    this.value = { count, version };
    log('%s: count %d at version %d', this.path, count, version);
    emitSafely(this, 'changed', [count, version], (format, ...values) => log(`%s: ${format}`, this.path, ...values));
  }
}
