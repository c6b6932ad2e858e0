import { EventEmitter } from 'node:events';
import debug from 'debug';
import {
  emitSafely,
  InvalidArgumentError,
  joinPath,
  validateClient,
  validateOptions,
  validateRecipePath,
  validateString,
  type ZkClient,
} from '../../src/recipeKit';
import { CuratorCache, type CacheWaitOptions } from '../cache/CuratorCache';
import type { ChildData } from '../cache/ChildData';
import { PersistentNode, type PersistentNodeWaitOptions } from './PersistentNode';

const log = debug('zk-recipes:nodes:group');

/** Options of a GroupMember. */
export interface GroupMemberOptions {
  /** Our member node's data; the client's `defaultData` (the local IP address, as Curator writes) when omitted. */
  payload?: Buffer | Uint8Array | string;
}

/** The events of a GroupMember: changes to the membership as seen from here. */
export interface GroupMemberEvents {
  /** A member joined (each member found by the first load too). */
  memberAdded: [id: string, payload: Buffer];
  /** A member's payload changed. */
  memberUpdated: [id: string, payload: Buffer];
  /** A member left. */
  memberRemoved: [id: string];
  /** A step failed (our node's create, a read of the membership); it is tried again. Emitted only when someone listens. */
  error: [err: unknown];
}

/**
 * Group membership, wire-compatible with Curator's GroupMember: each member keeps an EPHEMERAL node
 * `<membershipPath>/<id>` holding its payload (a PersistentNode: re-created when it goes), and
 * caches the membership path's children (a CuratorCache of depth 1). Java services running
 * Curator's GroupMember on the same path are members alike.
 *
 * - `getCurrentMembers()` is the membership as cached here, always with this member in it (with
 *   its own payload), as Curator's is. `memberAdded`, `memberUpdated` and `memberRemoved` tell of
 *   changes.
 * - **SUSPENDED.** The view may be stale while disconnected; our node lives as long as our session.
 * - **LOST.** Our node goes with the session, so others see us leave; in the client's next session
 *   it is created again (once the old one is gone) and the membership is read again: only the
 *   differences are reported.
 * - Ids must be unique in the group: two members with one id share a node, as in Curator.
 *
 * @example
 * ```ts
 * await using member = new GroupMember(client, '/services/api/members', 'api-7', { payload: '10.0.0.7:8080' });
 * member.on('memberRemoved', (id) => rebalance());
 * member.start();
 * await member.waitForInitialized({ timeoutMs: 10_000 });
 * console.log([...member.getCurrentMembers().keys()]);
 * ```
 */
export class GroupMember extends EventEmitter<GroupMemberEvents> implements AsyncDisposable {
  readonly client: ZkClient;
  readonly membershipPath: string;
  readonly thisId: string;
  private readonly node: PersistentNode;
  private readonly cache: CuratorCache;

  constructor(client: ZkClient, membershipPath: string, thisId: string, options: GroupMemberOptions = {}) {
    super();
    this.client = validateClient(client, 'GroupMember');
    this.membershipPath = validateRecipePath(this.client, membershipPath, 'membership');
    this.thisId = validateString(thisId, 'thisId');
    if (thisId.includes('/')) throw new InvalidArgumentError(`a member id is one node name, without '/': ${JSON.stringify(thisId)}`);
    const ourPath = joinPath(this.membershipPath, thisId);
    if (ourPath.slice(this.membershipPath.length + 1) !== thisId) throw new InvalidArgumentError(`a member id must be a node name: ${JSON.stringify(thisId)}`);
    const o = validateOptions(options, 'options');
    this.node = new PersistentNode(this.client, ourPath, { mode: 'EPHEMERAL', data: o.payload });
    const root = this.membershipPath;
    this.cache = new CuratorCache(this.client, root, { maxDepth: 1, filter: (p) => (p === root ? 'stat' : 'data') });
    const isMember = (node: ChildData) => node.path !== root;
    this.cache.on('created', (n) => isMember(n) && this.emitSafely('memberAdded', this.idFromPath(n.path), n.data ?? Buffer.alloc(0)));
    this.cache.on('changed', (n) => isMember(n) && this.emitSafely('memberUpdated', this.idFromPath(n.path), n.data ?? Buffer.alloc(0)));
    this.cache.on('deleted', (n) => isMember(n) && this.emitSafely('memberRemoved', this.idFromPath(n.path)));
    const onError = (err: unknown) => this.listenerCount('error') > 0 && this.emitSafely('error', err);
    this.cache.on('error', onError);
    this.node.on('error', onError);
  }

  /** Joins the group and starts caching the membership, in the background. Starts once. */
  start(): void {
    this.node.start();
    this.cache.start();
  }

  /**
   * Resolves once our node is created and the membership is loaded. Rejects with a TimeoutError
   * subclass when `timeoutMs` passes first, with `signal.reason` on abort, and with
   * IllegalStateError when not started or closed.
   */
  async waitForInitialized(options?: CacheWaitOptions & PersistentNodeWaitOptions): Promise<void> {
    await Promise.all([this.node.waitForInitialCreate(options), this.cache.waitForInitialized(options)]);
  }

  /** The members as cached here, id to payload, this member always in it with its own payload. */
  getCurrentMembers(): Map<string, Buffer> {
    const members = new Map<string, Buffer>();
    for (const child of this.cache.children(this.membershipPath)) members.set(this.idFromPath(child.path), child.data ?? Buffer.alloc(0));
    if (!members.has(this.thisId)) members.set(this.thisId, this.node.getData());
    return members;
  }

  /** Changes this member's payload; resolves once our node holds it (see PersistentNode's setData). */
  async setThisData(payload: Buffer | Uint8Array | string, options?: PersistentNodeWaitOptions): Promise<void> {
    await this.node.setData(payload, options);
  }

  /** The member id of a member node's path: its last segment. */
  idFromPath(path: string): string {
    return path.slice(path.lastIndexOf('/') + 1);
  }

  /** Leaves the group (our node is deleted) and stops caching. Idempotent. */
  async close(): Promise<void> {
    await Promise.all([this.cache.close(), this.node.close()]);
    log('%s: %s left', this.membershipPath, this.thisId);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private emitSafely<E extends keyof GroupMemberEvents>(event: E, ...args: GroupMemberEvents[E]): void {
    emitSafely(this, event, args, (format, ...values) => log(`%s: ${format}`, this.membershipPath, ...values));
  }
}
