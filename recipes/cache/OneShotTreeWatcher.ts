import debug from 'debug';
import { ChildrenWatch, type NodeChildren, type NodeData, NodeWatch, StepLoop, subscribe, type ZkClient } from '../../src/recipeKit';
import type { CacheScope } from './CacheScope';
import type { TreeWatcher, TreeWatcherSink } from './TreeWatcher';

const log = debug('zk-recipes:cache:oneshot');

/** One node of the tree, and the watches on it. */
class WatchedNode {
  /** Made for the first child: most nodes of a large tree are leaves. */
  children: Map<string, WatchedNode> | undefined;
  data: NodeWatch | undefined;
  kids: ChildrenWatch | undefined;
  /** Counted among the nodes whose first reads are not done. */
  pending = true;
  closed = false;

  constructor(
    readonly path: string,
    readonly depth: number,
    readonly parent: WatchedNode | undefined,
  ) {}

  childPath(name: string): string {
    return this.path === '/' ? `/${name}` : `${this.path}/${name}`;
  }
}

/**
 * The tree watcher of the native transport, which has no persistent watches (Curator's TreeCache
 * works this way): every node in scope has a NodeWatch on its data, and, above the depth limit, a
 * ChildrenWatch on its children. A node listed by its parent is watched; a node whose data watch
 * says it was deleted, or that its parent no longer lists, is dropped with its subtree. The root
 * is also watched while it is missing, for its creation.
 *
 * - Each node is reported with its data, as its watch reads it: no second read.
 * - **No missed events.** Each watch reads again after a reconnect that could not keep it, and in
 *   a new session (LOST): so after any outage every node is read again, and the cache hears only
 *   of the nodes that differ. While the same session reconnects, the server fires the watches of
 *   what changed meanwhile.
 * - A node whose first reads fail (retries spent) is tried again after a back-off, and on the next
 *   CONNECTED or RECONNECTED.
 */
export class OneShotTreeWatcher implements TreeWatcher {
  private root: WatchedNode | undefined;
  private pendingNodes = 0;
  private initialized = false;
  private closed = false;
  private readonly failed = new Set<WatchedNode>();
  private readonly restarter: StepLoop;
  private stopListening: (() => void) | undefined;

  constructor(
    private readonly client: ZkClient,
    private readonly scope: CacheScope,
    private readonly sink: TreeWatcherSink,
  ) {
    this.restarter = new StepLoop(() => this.restartFailed(), { onError: (err) => this.sink.error(err) });
  }

  start(): void {
    this.stopListening = subscribe(this.client, 'stateChanged', (state) => {
      if (state === 'CONNECTED' || state === 'RECONNECTED') this.restarter.kick();
    });
    this.root = this.watch(this.scope.root, 0, undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopListening?.();
    this.restarter.stop();
    const root = this.root;
    this.root = undefined;
    if (root) await this.drop(root, false);
  }

  // ---------------------------------------------------------------- nodes

  private watch(path: string, depth: number, parent: WatchedNode | undefined): WatchedNode {
    const node = new WatchedNode(path, depth, parent);
    this.pendingNodes++;
    this.arm(node).then(
      () => this.firstReadsDone(node),
      (err: unknown) => this.firstReadsFailed(node, err),
    );
    return node;
  }

  /** Sets the node's watches and resolves once both have read: their values are reported. */
  private async arm(node: WatchedNode): Promise<void> {
    // The root is watched for its creation too; any other node is found through its parent.
    const creation = node.parent === undefined;
    const onError = (err: unknown) => this.sink.error(err);
    node.data = new NodeWatch(this.client, node.path, (value) => this.onData(node, value), { creation, onError });
    if (this.scope.descends(node.depth)) {
      node.kids = new ChildrenWatch(this.client, node.path, (value) => this.onChildren(node, value), { creation, onError });
    }
    const { data, kids } = node;
    // Reported as the watch knows them once read: a change heard meanwhile is newer than the first read.
    const dataRead = data.start().then(() => this.onData(node, data.value ?? null));
    const kidsRead = kids?.start().then(() => this.onChildren(node, kids.value ?? null));
    await Promise.all([dataRead, kidsRead]);
  }

  private firstReadsDone(node: WatchedNode): void {
    if (!node.pending) return;
    node.pending = false;
    this.pendingNodes--;
    if (this.pendingNodes === 0 && !this.initialized && !this.closed) {
      this.initialized = true;
      log('%s: initialized', this.scope.root);
      this.sink.initialized();
    }
  }

  private firstReadsFailed(node: WatchedNode, err: unknown): void {
    if (node.closed || this.closed) return;
    log('%s: reading %s failed, again later: %s', this.scope.root, node.path, String(err));
    this.sink.error(err);
    this.failed.add(node);
    this.restarter.kick();
  }

  /** Arms the nodes whose first reads failed again; throws (the loop backs off) while any still fails. */
  private async restartFailed(): Promise<void> {
    if (!this.client.isConnected) return;
    const nodes = [...this.failed].filter((n) => !n.closed);
    this.failed.clear();
    const outcomes = await Promise.allSettled(
      nodes.map(async (node) => {
        await Promise.all([node.data?.close(), node.kids?.close()]);
        if (node.closed) return;
        await this.arm(node);
        this.firstReadsDone(node);
      }),
    );
    const failures = outcomes.flatMap((o, i) => (o.status === 'rejected' && !nodes[i].closed ? [{ node: nodes[i], err: o.reason as unknown }] : []));
    for (const { node } of failures) this.failed.add(node);
    if (failures.length > 0) throw failures[0].err;
  }

  // ---------------------------------------------------------------- what the watches say

  private onData(node: WatchedNode, value: NodeData | null): void {
    if (node.closed || this.closed) return;
    if (value !== null) {
      this.sink.changed(node.path, value);
      return;
    }
    if (node.parent === undefined) {
      // The root is gone: its subtree too. Its watches wait for it to come back.
      for (const child of [...(node.children?.values() ?? [])]) void this.drop(child, true);
      this.sink.deleted(node.path);
      return;
    }
    void this.drop(node, true);
  }

  private onChildren(node: WatchedNode, value: NodeChildren | null): void {
    if (node.closed || this.closed || value === null) return;
    const listed = new Set(value.children);
    if (node.children) for (const [name, child] of node.children) if (!listed.has(name)) void this.drop(child, true);
    for (const name of listed) {
      if (node.children?.has(name)) continue;
      const path = node.childPath(name);
      if (this.scope.decide(path) === 'exclude') continue;
      node.children ??= new Map();
      node.children.set(name, this.watch(path, node.depth + 1, node));
    }
  }

  /** Stops watching a node and its subtree; with `report`, tells the sink they are gone (deepest first). */
  private async drop(node: WatchedNode, report: boolean): Promise<void> {
    if (node.closed) return;
    node.closed = true;
    const name = node.path.slice(node.path.lastIndexOf('/') + 1);
    if (node.parent?.children?.get(name) === node) node.parent.children.delete(name);
    this.failed.delete(node);
    const below = [...(node.children?.values() ?? [])].map((child) => this.drop(child, report));
    if (report) this.sink.deleted(node.path);
    // A node dropped before its first reads are done no longer holds up the initialization.
    this.firstReadsDone(node);
    await Promise.all([...below, node.data?.close(), node.kids?.close()]);
  }
}
