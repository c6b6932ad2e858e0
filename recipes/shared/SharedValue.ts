import { EventEmitter } from 'node:events';
import debug from 'debug';
import {
  describeValue,
  emitSafely,
  IllegalStateError,
  InvalidArgumentError,
  isZkError,
  type NodeData,
  NodeWatch,
  toData,
  validateClient,
  validatePositiveInt,
  validateRecipePath,
  type ZkClient,
} from '../../src/recipeKit';

const log = debug('zk-recipes:shared:value');

const INT32_MAX = 2 ** 31 - 1;

/** Bytes as a SharedValue takes them: a string is written as UTF-8. */
export type SharedBytes = Buffer | Uint8Array | string;

/** A value with the node version it was read at, for `trySetValue`. */
export interface VersionedValue {
  /** A copy: changing it changes nothing shared. */
  readonly value: Buffer;
  /** The node's data version; -1 before `start()` has read it. */
  readonly version: number;
}

/** The events of a SharedValue. */
export interface SharedValueEvents {
  /** A newer value was seen: its bytes (a copy), and the node version it was read at. */
  changed: [value: Buffer, version: number];
}

/** Called with the new value and its version whenever a SharedValue sees a newer version. */
export type SharedValueListener = (value: Buffer, version: number) => void;

/** A copy of the bytes given, so that the caller changing its buffer later changes nothing here. */
function copyOf(value: unknown, name: string): Buffer {
  // toData takes null and undefined as no bytes: a value left out here is a mistake, not empty.
  if (value === undefined || value === null) throw new InvalidArgumentError(`${name} must be a Buffer, a Uint8Array or a string, got ${describeValue(value)}`);
  return Buffer.from(toData(value, name));
}

function validateVersioned(value: unknown): VersionedValue {
  if (typeof value !== 'object' || value === null) throw new InvalidArgumentError(`previous must be a { value, version } from getVersionedValue(), got ${describeValue(value)}`);
  const { value: bytes, version } = value as Partial<VersionedValue>;
  return {
    value: copyOf(bytes, 'previous.value'),
    version: validatePositiveInt(version, 'previous.version', { min: -1, max: INT32_MAX }),
  };
}

/**
 * Bytes shared through one node, wire-compatible with Curator's SharedValue: the node at `path`
 * holds the bytes as they are, and conditional updates are checked against the node's version.
 *
 * - `start()` creates the node with the seed if it is missing (parents as persistent nodes) and
 *   reads it; a node that exists keeps its value.
 * - `getValue()` is the last value seen: a NodeWatch keeps it current and emits 'changed' once per
 *   newer version, this object's own writes included. A node deleted and created again is
 *   followed: it is a newer value even though its version starts again at 0.
 * - `trySetValue(previous, bytes)` writes only if the node is still at `previous.version`. It
 *   resolves false when the version moved on, and the value seen is then the newer one: read
 *   again from the server, as Curator does, unless it was already newer than `previous`.
 * - Values go in and come out as copies: a caller's buffer changed later changes nothing shared.
 * - **SUSPENDED / LOST.** The value may be stale while disconnected (the client's 'stateChanged'
 *   tells when). After a reconnect that could not keep the watch, and in a new session after
 *   LOST, the node is read again and watched again, and a newer value is emitted as usual.
 *
 * @example
 * ```ts
 * const flags = new SharedValue(client, '/config/flags', '{}');
 * await flags.start();
 * flags.on('changed', (value) => apply(JSON.parse(value.toString())));
 * const seen = flags.getVersionedValue();
 * if (!(await flags.trySetValue(seen, '{"beta":true}'))) console.log('someone else won; now', flags.getValue().toString());
 * ```
 */
export class SharedValue extends EventEmitter<SharedValueEvents> {
  readonly client: ZkClient;
  readonly path: string;
  private readonly seed: Buffer;
  private value: Buffer;
  private version = -1;
  /** The czxid of the node the value was read from: a re-created node is a new one, whatever its version. */
  private czxid = -1n;
  private lifecycle: 'LATENT' | 'STARTED' | 'CLOSED' = 'LATENT';
  private watch: NodeWatch | undefined;

  constructor(client: ZkClient, path: string, seedValue: SharedBytes) {
    super();
    this.client = validateClient(client, 'SharedValue');
    this.path = validateRecipePath(this.client, path, 'shared value');
    this.seed = copyOf(seedValue, 'seedValue');
    this.value = this.seed;
  }

  /** Creates the node with the seed if it is missing, then reads and watches it. Starts once. */
  async start(): Promise<void> {
    if (this.lifecycle !== 'LATENT') throw new IllegalStateError(`a SharedValue starts once (it is ${this.lifecycle})`, { path: this.path });
    this.lifecycle = 'STARTED';
    try {
      await this.client.create(this.path, { data: this.seed, createParents: 'persistent' });
    } catch (err) {
      if (!isZkError(err, 'NODEEXISTS')) throw err;
    }
    this.watch = new NodeWatch(this.client, this.path, (node) => this.seen(node), {
      onError: (err) => log('%s: reading the value failed, again later: %s', this.path, String(err)),
    });
    this.seen(await this.watch.start());
  }

  /** A copy of the last value seen (the seed before `start()`). */
  getValue(): Buffer {
    return Buffer.from(this.value);
  }

  /** A copy of the last value seen, with the version it was read at: what `trySetValue` takes. */
  getVersionedValue(): VersionedValue {
    return { value: Buffer.from(this.value), version: this.version };
  }

  /** Sets the value whatever its version. */
  async setValue(newValue: SharedBytes): Promise<void> {
    const bytes = copyOf(newValue, 'newValue');
    this.assertStarted();
    const stat = await this.client.setData(this.path, bytes);
    this.update(bytes, stat.version, stat.czxid);
  }

  /**
   * Sets the value only if the node is still at `previous.version` (from `getVersionedValue()`
   * or a 'changed' event). Resolves false when the version moved on; `getValue()` is then the
   * newer value.
   *
   * Like Curator's, it resolves false without a write when `previous` is known to be stale: older
   * than the value seen last, or at its version with other bytes. Unlike Curator's, a `previous`
   * newer than the value seen (this object's watch has not fired yet) is left to the server to judge.
   */
  async trySetValue(previous: VersionedValue, newValue: SharedBytes): Promise<boolean> {
    const expected = validateVersioned(previous);
    const bytes = copyOf(newValue, 'newValue');
    this.assertStarted();
    if (expected.version < this.version || (expected.version === this.version && !expected.value.equals(this.value))) return false;
    try {
      const stat = await this.client.setData(this.path, bytes, { version: expected.version });
      this.update(bytes, stat.version, stat.czxid);
      return true;
    } catch (err) {
      if (!isZkError(err, 'BADVERSION')) throw err;
    }
    this.seen(await this.client.getData(this.path));
    return false;
  }

  /** Stops watching and drops the listeners. The node stays. Idempotent. */
  close(): void {
    this.lifecycle = 'CLOSED';
    void this.watch?.close();
    this.removeAllListeners();
  }

  private assertStarted(): void {
    if (this.lifecycle !== 'STARTED') throw new IllegalStateError(`the SharedValue is ${this.lifecycle}: call start() first`, { path: this.path });
  }

  private seen(node: NodeData | null): void {
    // Deleted: the value seen stays until the node comes back (the watch waits for it).
    if (node === null) return;
    this.update(node.data, node.stat.version, node.stat.czxid);
  }

  /** Keeps a value newer than the last one: a later version of the same node, or another node. */
  private update(bytes: Buffer, version: number, czxid: bigint): void {
    if (czxid === this.czxid && version <= this.version) return;
    this.czxid = czxid;
    this.value = bytes;
    this.version = version;
    log('%s: %d bytes at version %d', this.path, bytes.length, version);
    emitSafely(this, 'changed', [Buffer.from(bytes), version], (format, ...values) => log(`%s: ${format}`, this.path, ...values));
  }
}
