import { ZkError, isZkError } from '../src/errors';
import { joinPath } from '../src/paths';
import { sinceRead, type Command, type Report } from './command';
import { ageOf, durationText, ownerOf, plural } from './format';
import {
  LATCH_NAMES,
  LAYOUT_NAMES,
  LEASE_NAMES,
  MUTEX_NAMES,
  READ_WRITE_NAMES,
  SEMAPHORE_LEASES_PARENT,
  SEMAPHORE_LOCKS_PARENT,
  isSemaphorePart,
  isWriteNode,
  queueOrderOf,
  queueVariantOf,
  recognize,
  sortLockNodes,
  type LayoutKind,
  type QueueVariant,
} from './layouts';
import { readWriteHolds } from './locks';
import type { Listing, Reader } from './NodeReader';

/** One node of `zk-recipes tree`. */
export interface TreeNode {
  readonly name: string;
  readonly path: string;
  /** The owning session as 0x hex; null for a node no session owns. */
  readonly session: string | null;
  /** When the node was created (ISO 8601); null when it could not be read. */
  readonly created: string | null;
  readonly ageMs: number | null;
  /** Why the node could not be read (its ACL refused this client: NOAUTH); null when it was. */
  readonly error: string | null;
  /** The recipe whose nodes are this node's children; null for none. */
  readonly recipe: LayoutKind | 'semaphoreLocks' | 'semaphoreLeases' | null;
  /** The recipe and its state in a few words ("InterProcessMutex (or LeaderSelector): held, 2 waiting"); null for none. */
  readonly summary: string | null;
  /** What this node is in its parent's recipe: holder, waiting, reader, writer, leader, participant, lease, admitting, next, item, in hand; null for none. */
  readonly role: string | null;
  /** The children shown, recipe nodes first in the recipe's order. */
  readonly children: readonly TreeNode[];
  /** Children not shown, past the limits. */
  readonly more: number;
}

/** What `zk-recipes tree <path>` reports. */
export interface TreeReport extends Report {
  readonly command: 'tree';
  readonly root: TreeNode;
  /** How many nodes were read. */
  readonly nodes: number;
}

/** At most this many children of one node are read and shown; the rest are counted. */
export const TREE_CHILDREN_LIMIT = 25;
/** At most this many nodes are read in all. */
export const TREE_NODES_LIMIT = 2_000;
/** How many listings are in flight at once. */
const PARALLEL_LISTINGS = 32;

/** The children of a node in display order, with the role each plays in the node's recipe. */
interface Arranged {
  readonly recipe: TreeNode['recipe'];
  readonly summary: string | null;
  readonly ordered: readonly string[];
  readonly roles: ReadonlyMap<string, string>;
}

function arrange(children: readonly string[], parentRecipe: TreeNode['recipe'], name: string): Arranged {
  const lexical = [...children].sort();
  // The two folders of a semaphore are recognized by their parent.
  if (parentRecipe === 'semaphore' && name === SEMAPHORE_LEASES_PARENT) {
    const leases = sortLockNodes(children, LEASE_NAMES);
    return withRest('semaphoreLeases', `the semaphore's ${plural(leases.length, 'lease node')}`, leases, () => 'lease', lexical);
  }
  if (parentRecipe === 'semaphore' && name === SEMAPHORE_LOCKS_PARENT) {
    const line = sortLockNodes(children, MUTEX_NAMES);
    return withRest('semaphoreLocks', `the semaphore's admission line: ${plural(line.length, 'acquirer')}`, line, (i) => (i === 0 ? 'admitting' : 'waiting'), lexical);
  }
  const layout = recognize(children);
  if (layout === undefined) return { recipe: null, summary: null, ordered: lexical, roles: new Map() };
  const label = LAYOUT_NAMES[layout.kind];
  switch (layout.kind) {
    case 'semaphore':
      return { recipe: 'semaphore', summary: label, ordered: lexical, roles: new Map() };
    case 'mutex': {
      const nodes = sortLockNodes(layout.members, MUTEX_NAMES);
      return withRest('mutex', `${label}: held, ${nodes.length - 1} waiting`, nodes, (i) => (i === 0 ? 'holder' : 'waiting'), lexical);
    }
    case 'leaderLatch': {
      const nodes = sortLockNodes(layout.members, LATCH_NAMES);
      return withRest('leaderLatch', `${label}: ${plural(nodes.length, 'participant')}`, nodes, (i) => (i === 0 ? 'leader' : 'participant'), lexical);
    }
    case 'readWriteLock': {
      const nodes = sortLockNodes(layout.members, READ_WRITE_NAMES);
      const holds = readWriteHolds(nodes);
      const waiting = holds.filter((h) => !h).length;
      const role = (i: number) => (holds[i] ? (isWriteNode(nodes[i]) ? 'writer' : 'reader') : `waiting (${isWriteNode(nodes[i]) ? 'write' : 'read'})`);
      return withRest('readWriteLock', `${label}: ${nodes.length - waiting} holding, ${waiting} waiting`, nodes, role, lexical);
    }
    case 'distributedQueue':
    case 'simpleQueue': {
      const simple = layout.kind === 'simpleQueue';
      const items = layout.members;
      const variants = new Set(items.map(queueVariantOf).filter((v): v is QueueVariant => v !== undefined));
      const ordered = simple ? [...items].sort() : queueOrderOf(variants).sort(items);
      const kinds = simple ? '' : ` (${[...variants].sort().join(', ')})`;
      return withRest(layout.kind, `${label}${kinds}: depth ${items.length}`, ordered, (i) => (i === 0 ? 'next' : 'item'), lexical);
    }
  }
}

function withRest(recipe: TreeNode['recipe'], summary: string, members: readonly string[], role: (i: number) => string, lexical: readonly string[]): Arranged {
  const isMember = new Set(members);
  return {
    recipe,
    summary,
    ordered: [...members, ...lexical.filter((c) => !isMember.has(c))],
    roles: new Map(members.map((m, i) => [m, role(i)])),
  };
}

async function readTree(reader: Reader, path: string): Promise<TreeReport> {
  const at = new Date();
  const now = at.getTime();
  let budget = TREE_NODES_LIMIT - 1;
  let read = 1;
  let active = 0;
  const waiting: Array<() => void> = [];
  const limited = async <T>(fn: () => Promise<T>): Promise<T> => {
    // A finished listing hands its slot straight to the next in line.
    if (active < PARALLEL_LISTINGS) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };

  const visit = async (nodePath: string, name: string, listing: Listing, role: string | null, parentRecipe: TreeNode['recipe']): Promise<TreeNode> => {
    let arranged = arrange(listing.children, parentRecipe, name);
    const take = Math.max(0, Math.min(TREE_CHILDREN_LIMIT, budget, arranged.ordered.length));
    budget -= take;
    const shown = arranged.ordered.slice(0, take);
    // A node this client may not read is shown as such; the rest of the tree still is.
    const listings = await Promise.all(
      shown.map((child) => limited(() => reader.listIfAny(joinPath(nodePath, child)).catch((err: unknown) => (isZkError(err, 'NOAUTH') ? err : Promise.reject(err))))),
    );
    // `locks` and `leases` can be ordinary folders: only lease and lock nodes in them make a semaphore.
    const childrenOf = (i: number) => {
      const l = listings[i];
      return l === undefined || l instanceof ZkError ? [] : l.children;
    };
    if (arranged.recipe === 'semaphore' && !shown.every((child, i) => isSemaphorePart(child, childrenOf(i)))) {
      arranged = { recipe: null, summary: null, ordered: arranged.ordered, roles: new Map() };
    }
    read += shown.length;
    const children = await Promise.all(
      shown.map((child, i) => {
        const childListing = listings[i];
        if (childListing === undefined) return undefined;
        if (childListing instanceof ZkError) return unreadable(joinPath(nodePath, child), child, childListing);
        // A queue item that is EPHEMERAL is a consumer's lock on it: the lock path of a lock-safe queue.
        const childRole = arranged.roles.get(child) ?? null;
        const inHand = childListing.stat.ephemeralOwner !== 0n && (arranged.recipe === 'distributedQueue' || arranged.recipe === 'simpleQueue');
        return visit(joinPath(nodePath, child), child, childListing, inHand ? 'in hand' : childRole, arranged.recipe);
      }),
    );
    return {
      name,
      path: nodePath,
      session: ownerOf(listing.stat.ephemeralOwner),
      created: new Date(listing.stat.ctime).toISOString(),
      ageMs: ageOf(listing.stat.ctime, now),
      error: null,
      recipe: arranged.recipe,
      summary: arranged.summary,
      role,
      children: children.filter((c): c is TreeNode => c !== undefined),
      // Children deleted since the listing are neither shown nor counted.
      more: arranged.ordered.length - shown.length,
    };
  };

  const rootListing = await reader.list(path);
  const root = await visit(path, path === '/' ? '/' : path, rootListing, null, null);
  return { command: 'tree', path, at: at.toISOString(), root, nodes: read };
}

function unreadable(path: string, name: string, err: ZkError): TreeNode {
  return { name, path, session: null, created: null, ageMs: null, error: err.code, recipe: null, summary: null, role: null, children: [], more: 0 };
}

function render(report: TreeReport, nowMs: number): string {
  const later = sinceRead(report, nowMs);
  const lines: string[] = [];
  const describe = (node: TreeNode): string => {
    const facts: string[] = [];
    if (node.role) facts.push(node.role);
    if (node.summary) facts.push(node.summary);
    if (node.session) facts.push(`session ${node.session}`);
    if ((node.role || node.session) && node.ageMs !== null) facts.push(durationText(node.ageMs + later));
    if (node.error) facts.push(`(not readable: ${node.error})`);
    return facts.length > 0 ? `  ${facts.join('  ')}` : '';
  };
  const walk = (node: TreeNode, prefix: string, last: boolean, top: boolean): void => {
    const branch = top ? '' : last ? '└── ' : '├── ';
    lines.push(`${prefix}${branch}${node.name}${describe(node)}`);
    const inner = top ? '' : `${prefix}${last ? '    ' : '│   '}`;
    node.children.forEach((child, i) => walk(child, inner, i === node.children.length - 1 && node.more === 0, false));
    if (node.more > 0) lines.push(`${inner}└── … ${plural(node.more, 'more child', 'more children')}`);
  };
  walk(report.root, '', true, true);
  return lines.join('\n');
}

/** `zk-recipes tree <path>`. */
export const treeCommand: Command<TreeReport> = {
  name: 'tree',
  summary: `the nodes under a path, with the recipe each belongs to (${TREE_CHILDREN_LIMIT} children a node at most)`,
  read: readTree,
  render,
};
