import debug from 'debug';
import {
  isZkError,
  joinPath,
  validateBoolean,
  validateClient,
  validateOptions,
  validatePositiveInt,
  validateRecipePath,
  validateString,
  type ZkClient,
} from '../../src/recipeKit';
import { PersistentNode, type PersistentNodeWaitOptions } from './PersistentNode';

const log = debug('zk-recipes:nodes:ttl');

/** Options of a PersistentTtlNode. Defaults are in `PERSISTENT_TTL_NODE_DEFAULTS`. */
export interface PersistentTtlNodeOptions {
  /** How long the node outlives its last touch, in ms (required): an integer from 1 to 2^31-1. */
  ttlMs: number;
  /** The node's data; the client's `defaultData` when omitted. */
  data?: Buffer | Uint8Array | string;
  /** The name of the child that is touched (Curator's DEFAULT_CHILD_NODE_NAME). */
  childNodeName?: string;
  /** The child is touched every `ttlMs / touchScheduleFactor` ms (Curator's DEFAULT_TOUCH_SCHEDULE_FACTOR). */
  touchScheduleFactor?: number;
  /** Create missing parents as containers. */
  createParents?: boolean;
}

/** The defaults of PersistentTtlNodeOptions, frozen. */
export const PERSISTENT_TTL_NODE_DEFAULTS = Object.freeze({
  childNodeName: 'touch',
  touchScheduleFactor: 2,
  createParents: true,
});

/**
 * A node that lives while its process touches it, and goes about `ttlMs` after the process
 * stops, wire-compatible with Curator's PersistentTtlNode: a PersistentNode at `path` (here
 * PERSISTENT_WITH_TTL, as Curator's since the fix of its #1258; Curator 5.4 makes it a CONTAINER)
 * and a PERSISTENT_WITH_TTL child `<path>/touch` whose data is set every `ttlMs / 2`. Setting the
 * child's data fires no watch on the parent, so watchers of the node see no noise. When the process
 * dies, the child expires after `ttlMs`, then the childless parent. The server must allow TTL nodes
 * (`zookeeper.extendedTypesEnabled=true`).
 *
 * - The node itself is kept by a PersistentNode: re-created with its data when it goes.
 * - **SUSPENDED / LOST.** Touches fail while disconnected (they are tried again at the next
 *   tick); nothing belongs to the session, so LOST changes nothing else. A partition longer than
 *   `ttlMs` lets the server delete the nodes; they are re-created after it.
 * - `close()` stops touching and leaves the nodes to their TTL, as Curator does.
 *
 * @example
 * ```ts
 * const marker = new PersistentTtlNode(client, '/jobs/running/job-42', { ttlMs: 30_000, data: 'host-7' });
 * marker.start();
 * await marker.waitForInitialCreate({ timeoutMs: 10_000 });
 * ```
 */
export class PersistentTtlNode implements AsyncDisposable {
  readonly client: ZkClient;
  readonly path: string;
  readonly ttlMs: number;
  readonly childPath: string;
  private readonly node: PersistentNode;
  private readonly touchEveryMs: number;
  private timer: NodeJS.Timeout | undefined;
  private touching = false;

  constructor(client: ZkClient, path: string, options: PersistentTtlNodeOptions) {
    this.client = validateClient(client, 'PersistentTtlNode');
    this.path = validateRecipePath(this.client, path, 'TTL node');
    const o = validateOptions(options, 'options');
    this.ttlMs = validatePositiveInt(o.ttlMs, 'ttlMs', { min: 1, max: 2 ** 31 - 1 });
    const childName = o.childNodeName === undefined ? PERSISTENT_TTL_NODE_DEFAULTS.childNodeName : validateString(o.childNodeName, 'childNodeName');
    const factor = o.touchScheduleFactor === undefined ? PERSISTENT_TTL_NODE_DEFAULTS.touchScheduleFactor : validatePositiveInt(o.touchScheduleFactor, 'touchScheduleFactor');
    const createParents = o.createParents === undefined ? PERSISTENT_TTL_NODE_DEFAULTS.createParents : validateBoolean(o.createParents, 'createParents');
    this.childPath = joinPath(this.path, childName);
    this.client.validateCreate(this.childPath, { mode: 'PERSISTENT_WITH_TTL', ttlMs: this.ttlMs });
    this.touchEveryMs = Math.max(1, Math.floor(this.ttlMs / factor));
    this.node = new PersistentNode(this.client, this.path, { mode: 'PERSISTENT_WITH_TTL', ttlMs: this.ttlMs, data: o.data, createParents }, { deleteOnClose: false });
  }

  /** Creates the node in the background and starts touching it. Starts once. */
  start(): void {
    this.node.start();
    this.timer = setInterval(() => void this.touch(), this.touchEveryMs);
    this.timer.unref();
  }

  /** The node's path once created. */
  get actualPath(): string | undefined {
    return this.node.actualPath;
  }

  /** As PersistentNode's. */
  async waitForInitialCreate(options?: PersistentNodeWaitOptions): Promise<void> {
    await this.node.waitForInitialCreate(options);
  }

  /** As PersistentNode's. */
  async setData(data: Buffer | Uint8Array | string, options?: PersistentNodeWaitOptions): Promise<void> {
    await this.node.setData(data, options);
  }

  getData(): Buffer {
    return this.node.getData();
  }

  /** Stops touching; the nodes stay until their TTL runs out (unless another PersistentTtlNode touches them). Idempotent. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.node.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Sets the child's data, or creates the child when it is missing (Curator's create-or-set-data). */
  async touch(): Promise<void> {
    if (this.touching || this.timer === undefined || !this.client.isConnected) return;
    this.touching = true;
    const signal = AbortSignal.timeout(this.touchEveryMs);
    try {
      try {
        await this.client.setData(this.childPath, this.client.options.defaultData, { signal });
      } catch (err) {
        if (!isZkError(err, 'NONODE')) throw err;
        try {
          await this.client.create(this.childPath, { mode: 'PERSISTENT_WITH_TTL', ttlMs: this.ttlMs, signal });
        } catch (createErr) {
          if (!isZkError(createErr, 'NODEEXISTS')) throw createErr;
          await this.client.setData(this.childPath, this.client.options.defaultData, { signal });
        }
      }
    } catch (err) {
      // NONODE: the parent is not there (yet); the PersistentNode brings it back.
      log('%s: could not touch %s: %s', this.path, this.childPath, String(err));
    } finally {
      this.touching = false;
    }
  }
}
