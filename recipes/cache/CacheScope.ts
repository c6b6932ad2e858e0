import { describeValue, InvalidArgumentError, validateFunction, validatePositiveInt } from '../../src/recipeKit';

/**
 * What a cache keeps of a node: its data and stat ('data'), its stat only ('stat'), or nothing,
 * and nothing below it either ('exclude').
 */
export type CacheFilterDecision = 'data' | 'stat' | 'exclude';

/**
 * Chooses, for each node, what the cache keeps of it. Called with the node's path (within the
 * client's namespace) whenever the cache meets the node; it must give the same answer for the same
 * path every time, and not throw (a throw counts as 'exclude').
 */
export type CacheFilter = (path: string) => CacheFilterDecision;

/** Which nodes of the tree a cache keeps: a filter, and a depth below its root. */
export class CacheScope {
  readonly maxDepth: number;
  private readonly filter: CacheFilter | undefined;

  constructor(
    readonly root: string,
    filter: unknown,
    maxDepth: unknown,
  ) {
    this.filter = filter === undefined ? undefined : (validateFunction(filter, 'filter') as CacheFilter);
    this.maxDepth = maxDepth === undefined ? Infinity : maxDepth === Infinity ? Infinity : validatePositiveInt(maxDepth, 'maxDepth', { min: 0 });
  }

  /** What the filter says of one node, without looking at its ancestors. */
  decide(path: string): CacheFilterDecision {
    if (this.filter === undefined) return 'data';
    let decision: unknown;
    try {
      decision = this.filter(path);
    } catch {
      return 'exclude';
    }
    if (decision !== 'data' && decision !== 'stat' && decision !== 'exclude') {
      throw new InvalidArgumentError(`the cache filter must return 'data', 'stat' or 'exclude', got ${describeValue(decision)} for ${path}`, { path });
    }
    return decision;
  }

  /** How deep `path` is below the root (0 for the root), or -1 when it is not in the root's tree. */
  depthOf(path: string): number {
    if (path === this.root) return 0;
    const prefix = this.root === '/' ? '/' : `${this.root}/`;
    if (!path.startsWith(prefix)) return -1;
    let depth = 1;
    for (let i = prefix.length; i < path.length; i++) if (path.charCodeAt(i) === 47) depth++;
    return depth;
  }

  /**
   * What the cache keeps of a node met by an event (a persistent watch reports the whole subtree):
   * nothing when it is too deep or it, or an ancestor below the root, is excluded.
   */
  decideFromEvent(path: string): CacheFilterDecision {
    const depth = this.depthOf(path);
    if (depth < 0 || depth > this.maxDepth) return 'exclude';
    if (this.filter !== undefined) {
      for (let end = path.indexOf('/', this.root === '/' ? 1 : this.root.length + 1); end > 0; end = path.indexOf('/', end + 1)) {
        if (this.decide(path.slice(0, end)) === 'exclude') return 'exclude';
      }
      if (this.root !== path && this.decide(this.root) === 'exclude') return 'exclude';
    }
    return this.decide(path);
  }

  /** Whether the children of a node at `depth` are watched. */
  descends(depth: number): boolean {
    return depth < this.maxDepth;
  }
}
