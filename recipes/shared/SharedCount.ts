import debug from 'debug';
import { subscribe } from '../../src/util/events';
import type { ZkClient } from '../../src/client/ZkClient';
import { IllegalStateError, InvalidArgumentError, isZkError, ZkError } from '../../src/errors';
import { validatePath } from '../../src/paths';
import { validateFunction, validatePositiveInt } from '../../src/validate';

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

/** Reads Curator's 4-byte big-endian int. Like Curator, bytes past the fourth are ignored. */
export function decodeCount(bytes: Buffer, path?: string): number {
  if (bytes.length < 4) throw new ZkError('BAD_DATA', `a shared count needs 4 bytes, ${path ?? 'the node'} has ${bytes.length}`, { path });
  return bytes.readInt32BE(0);
}

function validateCount(value: unknown, name: string): number {
  return validatePositiveInt(value, name, { min: INT32_MIN, max: INT32_MAX });
}

/**
 * An int shared through one node, wire-compatible with Curator's SharedCount: the node at `path`
 * holds the count as a 4-byte big-endian int, and updates are checked against the node's version.
 *
 * - `start()` creates the node with the seed if it is missing (parents as persistent nodes, as
 *   Curator's SharedValue does) and reads it; a node that exists keeps its value.
 * - `getCount()` is the last count seen: a data watch, set again each time it fires, keeps it
 *   current and calls the 'changed' listeners once per newer version.
 * - **SUSPENDED / LOST.** The count may be stale while disconnected. After a reconnect, and
 *   when a new session replaces a lost one, the node is read again (and watched again).
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
export class SharedCount {
  readonly path: string;
  private readonly seed: number;
  private value: VersionedCount;
  private readonly listeners = new Set<SharedCountListener>();
  private lifecycle: 'LATENT' | 'STARTED' | 'CLOSED' = 'LATENT';
  private watching = false;
  private stopStates: (() => void) | undefined;

  constructor(
    readonly client: ZkClient,
    path: string,
    seedValue: number,
  ) {
    this.path = validatePath(path);
    this.seed = validateCount(seedValue, 'seedValue');
    this.value = { count: this.seed, version: -1 };
  }

  /** Creates the node with the seed if it is missing, then reads and watches it. Starts once. */
  async start(): Promise<void> {
    if (this.lifecycle !== 'LATENT') throw new IllegalStateError(`a SharedCount starts once (it is ${this.lifecycle})`, { path: this.path });
    this.lifecycle = 'STARTED';
    this.stopStates = subscribe(this.client, 'stateChanged', (state) => {
      if (state === 'RECONNECTED') this.refresh();
    });
    try {
      await this.client.create(this.path, { data: encodeCount(this.seed), createParents: 'persistent' });
    } catch (err) {
      if (!isZkError(err, 'NODEEXISTS')) throw err;
    }
    this.watching = true;
    try {
      const { data, stat } = await this.client.getData(this.path, { watcher: () => this.onWatch() });
      this.update(decodeCount(data, this.path), stat.version);
    } catch (err) {
      this.watching = false;
      throw err;
    }
  }

  /** The last count seen (the seed before `start()`). */
  getCount(): number {
    return this.value.count;
  }

  /** The last count seen and the version it was read at. */
  getVersionedValue(): VersionedCount {
    return this.value;
  }

  /** Sets the count whatever its version. */
  async setCount(newCount: number): Promise<void> {
    const count = validateCount(newCount, 'newCount');
    this.assertStarted();
    const stat = await this.client.setData(this.path, encodeCount(count));
    this.update(count, stat.version);
  }

  /**
   * Sets the count only if the node is still at `expectedVersion` (from `getVersionedValue()`).
   * Resolves false when someone changed it since; the count seen is then read again.
   */
  async trySetCount(newCount: number, expectedVersion: number): Promise<boolean> {
    const count = validateCount(newCount, 'newCount');
    const version = validatePositiveInt(expectedVersion, 'expectedVersion', { min: 0, max: INT32_MAX });
    this.assertStarted();
    try {
      const stat = await this.client.setData(this.path, encodeCount(count), { version });
      this.update(count, stat.version);
      return true;
    } catch (err) {
      if (!isZkError(err, 'BADVERSION')) throw err;
    }
    const { data, stat } = await this.client.getData(this.path);
    this.update(decodeCount(data, this.path), stat.version);
    return false;
  }

  /** Calls `listener(count, version)` whenever a newer version is seen. Returns a function that removes it. */
  on(event: 'changed', listener: SharedCountListener): () => void {
    if (event !== 'changed') throw new InvalidArgumentError(`unknown event ${String(event)}`);
    this.listeners.add(validateFunction(listener, 'listener'));
    return () => this.off(event, listener);
  }

  off(_event: 'changed', listener: SharedCountListener): void {
    this.listeners.delete(listener);
  }

  /** Stops watching and drops the listeners. The node stays. Idempotent. */
  close(): void {
    this.lifecycle = 'CLOSED';
    this.stopStates?.();
    this.listeners.clear();
  }

  private assertStarted(): void {
    if (this.lifecycle !== 'STARTED') throw new IllegalStateError(`the SharedCount is ${this.lifecycle}: call start() first`, { path: this.path });
  }

  private onWatch(): void {
    this.watching = false;
    this.refresh();
  }

  /** Reads the node again; sets a watch unless one is outstanding, so watches never pile up. */
  private refresh(): void {
    if (this.lifecycle !== 'STARTED') return;
    const watch = !this.watching;
    this.watching ||= watch;
    this.client
      .getData(this.path, watch ? { watcher: () => this.onWatch() } : {})
      .then(({ data, stat }) => this.update(decodeCount(data, this.path), stat.version))
      .catch((err: unknown) => {
        if (watch) this.watching = false;
        if (this.lifecycle !== 'STARTED') return;
        if (isZkError(err, 'NONODE') && !this.watching) {
          // The node was deleted: exists (unlike getData) leaves a watch that fires when it is created
          // again, and a re-created node starts again at version 0.
          this.value = { count: this.value.count, version: -1 };
          this.watching = true;
          this.client.exists(this.path, { watcher: () => this.onWatch() }).catch((e: unknown) => {
            this.watching = false;
            log('%s: watching for the node failed: %s', this.path, String(e));
          });
          return;
        }
        // Read again on the next reconnect.
        log('%s: reading the count failed: %s', this.path, String(err));
      });
  }

  private update(count: number, version: number): void {
    if (version <= this.value.version) return;
    this.value = { count, version };
    log('%s: count %d at version %d', this.path, count, version);
    for (const listener of [...this.listeners]) {
      try {
        listener(count, version);
      } catch (err) {
        log('%s: a changed listener threw: %O', this.path, err);
      }
    }
  }
}
