import debug from 'debug';
import { isZkError, type NodeData, StepLoop, type ZkClient } from '../../src/recipeKit';
import type { CacheScope } from './CacheScope';

const log = debug('zk-recipes:cache:reader');

/** Where the reader puts what it reads. */
export interface ReadTarget {
  /** A node as read, or null: not there. */
  read(path: string, node: NodeData | null): void;
  /** The paths held now. */
  paths(): Iterable<string>;
  error(err: unknown): void;
}

/**
 * The reads a cache makes itself, for tree watchers that report paths without data (a persistent
 * watch): one read per reported path at a time (a path reported again meanwhile is read once more
 * afterwards), and rebuilds, which read the whole tree and then drop what was not found.
 *
 * - A rebuild walks the tree from the root, level by level, with the scope's filter and depth;
 *   every node read (or reported by an event) while it runs counts as found, so nothing created
 *   meanwhile is dropped.
 * - A read or a rebuild that fails is tried again with a back-off: a failed read becomes a rebuild.
 */
export class TreeReader {
  private readonly inFlight = new Set<string>();
  private readonly again = new Set<string>();
  /** While a rebuild runs: what it has found, and the paths events reported meanwhile. */
  private found: Set<string> | undefined;
  private readonly rebuilder: StepLoop;
  private waiting: Array<() => void> = [];
  private closed = false;

  constructor(
    private readonly client: ZkClient,
    private readonly scope: CacheScope,
    private readonly target: ReadTarget,
  ) {
    this.rebuilder = new StepLoop(() => this.rebuildOnce(), { onError: (err) => this.target.error(err) });
  }

  /** Reads `path` (again). */
  read(path: string): void {
    if (this.closed) return;
    this.found?.add(path);
    if (this.inFlight.has(path)) {
      this.again.add(path);
      return;
    }
    this.inFlight.add(path);
    void this.readOnce(path);
  }

  /** Notes that an event reported `path` (a rebuild under way must not drop it). */
  noted(path: string): void {
    this.found?.add(path);
  }

  /** Reads the whole tree again; resolves when a rebuild that started after this call is done. */
  rebuild(): Promise<void> {
    if (this.closed) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.waiting.push(resolve));
    this.rebuilder.kick();
    return done;
  }

  close(): void {
    this.closed = true;
    this.rebuilder.stop();
    for (const wake of this.waiting.splice(0)) wake();
  }

  private async readOnce(path: string): Promise<void> {
    try {
      const node = await this.getData(path);
      if (!this.closed) this.target.read(path, node);
    } catch (err) {
      log('%s: reading %s failed; reading the tree again: %s', this.scope.root, path, String(err));
      this.target.error(err);
      this.rebuilder.kick();
    } finally {
      this.inFlight.delete(path);
      if (this.again.delete(path)) this.read(path);
    }
  }

  private async rebuildOnce(): Promise<void> {
    if (this.closed) return;
    const waiting = this.waiting;
    this.waiting = [];
    const found = new Set<string>();
    this.found = found;
    try {
      await this.walk(this.scope.root, 0, found);
    } catch (err) {
      this.waiting.push(...waiting);
      throw err;
    } finally {
      this.found = undefined;
    }
    if (this.closed) return;
    for (const path of [...this.target.paths()]) if (!found.has(path)) this.target.read(path, null);
    log('%s: rebuilt: %d nodes', this.scope.root, found.size);
    for (const wake of waiting) wake();
  }

  private async walk(path: string, depth: number, found: Set<string>): Promise<void> {
    if (this.closed || this.scope.decide(path) === 'exclude') return;
    const node = await this.getData(path);
    if (node === null || this.closed) return;
    found.add(path);
    this.target.read(path, node);
    if (!this.scope.descends(depth)) return;
    let children: string[];
    try {
      children = await this.client.getChildren(path);
    } catch (err) {
      if (isZkError(err, 'NONODE')) return;
      throw err;
    }
    await Promise.all(children.map((name) => this.walk(path === '/' ? `/${name}` : `${path}/${name}`, depth + 1, found)));
  }

  private async getData(path: string): Promise<NodeData | null> {
    try {
      return await this.client.getData(path);
    } catch (err) {
      if (isZkError(err, 'NONODE')) return null;
      throw err;
    }
  }
}
