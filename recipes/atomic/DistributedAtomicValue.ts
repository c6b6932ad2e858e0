import debug from 'debug';
import { isZkError, now, type RetryPolicy, sleep, toData, validateClient, validateFunction, validateRecipePath, type ZkClient } from '../../src/recipeKit';
import { InterProcessMutex } from '../locks/InterProcessMutex';
import { LockTimeoutError } from '../locks/errors';
import { MutableStats, type AtomicValue } from './AtomicValue';
import { AtomicContentionError } from './errors';
import { operationSignal, resolveAtomicOptions, type AtomicOperationOptions, type DistributedAtomicOptions, type ResolvedAtomicOptions } from './options';

const log = debug('zk-recipes:atomic:value');

/** Bytes as the atomic values take them. */
export type AtomicBytes = Buffer | Uint8Array | string;

/** Makes the new value from the one read (null: the node does not exist yet). */
export type MakeValue = (previous: Buffer | null) => Buffer;

function outcome<T>(succeeded: boolean, preValue: T, postValue: T, stats: MutableStats): AtomicValue<T> {
  return Object.freeze({ succeeded, preValue, postValue, stats: stats.freeze() });
}

/**
 * A value shared through one node that is updated atomically, wire-compatible with Curator's
 * DistributedAtomicValue: the node at `path` holds the value's bytes as they are, and every update
 * is a compare-and-set against the node's version.
 *
 * - **Optimistic first.** An update reads the node, makes the new value and writes it with the
 *   version read (or creates the node, parents as containers, when it does not exist). When
 *   another writer got there first, the retry policy is asked, with an AtomicContentionError,
 *   whether and when to try again.
 * - **Promoted to a lock** (`promotedToLock`): when the optimistic attempts give up, it takes an
 *   InterProcessMutex at the lock path and tries again while holding it, under the promotion's own
 *   retry policy. A lock that is not had within `timeoutMs` means the update did not succeed.
 * - Check `succeeded` on every result: an update that gave up resolves with `succeeded: false`
 *   and changed nothing. Server errors other than a lost race (NOAUTH, a connection that does not
 *   come back within the client's retries) reject.
 * - **SUSPENDED / LOST.** The value holds no session state: an update in flight is retried by the
 *   client like any operation, and the version check keeps a retried write from applying twice
 *   over another writer's. A write whose reply was lost can still have applied: the retry then
 *   finds the version moved on and counts as a lost race, so the update may report
 *   `succeeded: false` (or, for a relative update, apply again on the newer value): as with
 *   Curator, check the value when it matters.
 *
 * @example
 * ```ts
 * const config = new DistributedAtomicValue(client, '/config/blob');
 * const result = await config.trySet(Buffer.from('v2'));
 * if (!result.succeeded) console.log('lost the race; still', result.preValue);
 * ```
 */
export class DistributedAtomicValue {
  readonly client: ZkClient;
  readonly path: string;
  private readonly options: ResolvedAtomicOptions;
  private readonly mutex: InterProcessMutex | undefined;

  constructor(client: ZkClient, path: string, options: DistributedAtomicOptions = {}) {
    this.client = validateClient(client, 'DistributedAtomicValue');
    this.path = validateRecipePath(this.client, path, 'atomic value');
    this.options = resolveAtomicOptions(this.client, options);
    this.mutex = this.options.promoted ? new InterProcessMutex(this.client, this.options.promoted.lockPath) : undefined;
  }

  /** The current value: null when the node does not exist (never set). Always succeeds. */
  async get(options?: AtomicOperationOptions): Promise<AtomicValue<Buffer | null>> {
    const signal = operationSignal(options);
    const { value } = await this.read(signal);
    return outcome(true, value, value, new MutableStats());
  }

  /** Sets the value whatever it is, creating the node (parents as containers) if needed. No atomicity. */
  async forceSet(newValue: AtomicBytes, options?: AtomicOperationOptions): Promise<void> {
    const signal = operationSignal(options);
    const bytes = this.checkValue(newValue, 'newValue');
    try {
      await this.client.setData(this.path, bytes, { signal });
      return;
    } catch (err) {
      if (!isZkError(err, 'NONODE')) throw err;
    }
    try {
      await this.client.create(this.path, { data: bytes, createParents: 'container', signal });
    } catch (err) {
      if (!isZkError(err, 'NODEEXISTS')) throw err;
      await this.client.setData(this.path, bytes, { signal });
    }
  }

  /**
   * Sets the value to `newValue` only if it is now `expectedValue` (byte for byte), in one attempt.
   * Does not succeed when the node does not exist, or when another writer changes it first.
   */
  async compareAndSet(expectedValue: AtomicBytes, newValue: AtomicBytes, options?: AtomicOperationOptions): Promise<AtomicValue<Buffer | null>> {
    const signal = operationSignal(options);
    const expected = toData(expectedValue, 'expectedValue');
    const bytes = this.checkValue(newValue, 'newValue');
    const stats = new MutableStats();
    const { value, version } = await this.read(signal);
    if (value === null || !value.equals(expected)) return outcome(false, value, null, stats);
    try {
      await this.client.setData(this.path, bytes, { version, signal });
      return outcome(true, value, Buffer.from(bytes), stats);
    } catch (err) {
      if (isZkError(err, 'BADVERSION') || isZkError(err, 'NONODE')) return outcome(false, value, null, stats);
      throw err;
    }
  }

  /** Sets the value with compare-and-set attempts under the retry policy (and the promoted lock, if configured). */
  async trySet(newValue: AtomicBytes, options?: AtomicOperationOptions): Promise<AtomicValue<Buffer | null>> {
    const signal = operationSignal(options);
    const bytes = this.checkValue(newValue, 'newValue');
    return this.run(() => bytes, signal);
  }

  /**
   * Sets the value only if the node does not exist yet (atomic values start out as null, like a
   * database's NULL). Resolves true if it created the node, false if the node existed.
   */
  async initialize(value: AtomicBytes, options?: AtomicOperationOptions): Promise<boolean> {
    const signal = operationSignal(options);
    const bytes = this.checkValue(value, 'value');
    try {
      await this.client.create(this.path, { data: bytes, createParents: 'container', signal });
      return true;
    } catch (err) {
      if (isZkError(err, 'NODEEXISTS')) return false;
      throw err;
    }
  }

  /**
   * Writes the value `make` builds from the current one (null when the node does not exist yet),
   * with compare-and-set attempts under the retry policy, then under the promoted lock if
   * configured: a read-modify-write. `make` may be called once per attempt; if it throws, the
   * update rejects with its error.
   */
  async update(make: MakeValue, options?: AtomicOperationOptions): Promise<AtomicValue<Buffer | null>> {
    const signal = operationSignal(options);
    validateFunction(make, 'make');
    return this.run(make, signal);
  }

  private async run(make: MakeValue, signal: AbortSignal | undefined): Promise<AtomicValue<Buffer | null>> {
    const stats = new MutableStats();
    const state: Attempted = { preValue: null, postValue: null };
    const startedAt = now();
    let done = await this.attempts(make, this.options.retryPolicy, state, signal, () => stats.optimisticTries++);
    stats.optimisticTimeMs = Math.round(now() - startedAt);
    if (!done && this.mutex && this.options.promoted) {
      const promotedAt = now();
      done = await this.underLock(this.mutex, this.options.promoted, make, state, stats, signal);
      stats.promotedTimeMs = Math.round(now() - promotedAt);
    }
    log('%s: update %s after %d optimistic and %d promoted tries', this.path, done ? 'succeeded' : 'gave up', stats.optimisticTries, stats.promotedLockTries);
    return outcome(done, state.preValue, done ? state.postValue : null, stats);
  }

  private async underLock(
    mutex: InterProcessMutex,
    promoted: NonNullable<ResolvedAtomicOptions['promoted']>,
    make: MakeValue,
    state: Attempted,
    stats: MutableStats,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    let lease;
    try {
      lease = await mutex.acquire({ timeoutMs: promoted.timeoutMs, signal });
    } catch (err) {
      if (err instanceof LockTimeoutError) return false;
      throw err;
    }
    try {
      return await this.attempts(make, promoted.retryPolicy, state, signal, () => stats.promotedLockTries++);
    } finally {
      await lease.release();
    }
  }

  /** Compare-and-set attempts until one succeeds or `policy` gives up. */
  private async attempts(make: MakeValue, policy: RetryPolicy, state: Attempted, signal: AbortSignal | undefined, count: () => void): Promise<boolean> {
    const startedAt = now();
    for (let retries = 0; ; retries++) {
      count();
      if (await this.attemptOnce(make, state, signal)) return true;
      const delayMs = policy.allowRetry(retries, now() - startedAt, new AtomicContentionError({ path: this.path }));
      if (delayMs === false) return false;
      await sleep(delayMs, signal);
    }
  }

  /** One read, then a write against what was read. False when another writer came first. */
  private async attemptOnce(make: MakeValue, state: Attempted, signal: AbortSignal | undefined): Promise<boolean> {
    const { value, version } = await this.read(signal);
    state.preValue = value;
    const bytes = toData(make(value), 'the value made');
    if (bytes.length > 0) this.client.validateCreate(this.path, { data: bytes, createParents: 'container' });
    try {
      if (value === null) await this.client.create(this.path, { data: bytes, createParents: 'container', signal });
      else await this.client.setData(this.path, bytes, { version, signal });
    } catch (err) {
      if (isZkError(err, 'NODEEXISTS') || isZkError(err, 'BADVERSION') || isZkError(err, 'NONODE')) return false;
      throw err;
    }
    state.postValue = Buffer.from(bytes);
    return true;
  }

  private async read(signal: AbortSignal | undefined): Promise<{ value: Buffer | null; version: number }> {
    try {
      const { data, stat } = await this.client.getData(this.path, { signal });
      return { value: data, version: stat.version };
    } catch (err) {
      if (isZkError(err, 'NONODE')) return { value: null, version: -1 };
      throw err;
    }
  }

  /** Checks a value as the create that may write it would, before any I/O. */
  private checkValue(value: AtomicBytes, name: string): Buffer {
    const bytes = toData(value, name);
    this.client.validateCreate(this.path, { data: bytes, createParents: 'container' });
    return bytes;
  }
}

/** The values of the last attempt. */
interface Attempted {
  preValue: Buffer | null;
  postValue: Buffer | null;
}
