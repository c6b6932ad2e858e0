import { joinPath } from '../src/paths';
import { sinceRead, type Command, type Report } from './command';
import { plural, table } from './format';
import {
  LAYOUTS_OF,
  LAYOUT_NAMES,
  LEASE_NAMES,
  MUTEX_NAMES,
  READ_WRITE_NAMES,
  SEMAPHORE_LEASES_PARENT,
  SEMAPHORE_LOCKS_PARENT,
  isSemaphorePart,
  isWriteNode,
  notARecipe,
  readWriteSequence,
  layoutFor,
  sortLockNodes,
  type Layout,
} from './layouts';
import type { Listing, Reader } from './NodeReader';
import { nodeCells, nodeView, type NodeView } from './nodeView';

/** How a node takes part in a lock: a mutex's node, a read or write node, or a semaphore's lease node. */
export type LockMode = 'exclusive' | 'read' | 'write' | 'lease';

/** A lock node with how it takes part. */
export interface LockNode extends NodeView {
  readonly mode: LockMode;
}

/** What `zk-recipes locks <path>` reports. */
export interface LocksReport extends Report {
  readonly command: 'locks';
  /** The layout found; null for a node without children (a lock nobody holds or waits for). */
  readonly recipe: 'mutex' | 'readWriteLock' | 'semaphore' | null;
  /**
   * Who holds the lock: the mutex's first node; the readers (or the one writer) that hold a
   * read-write lock; every lease node of a semaphore.
   */
  readonly holders: readonly LockNode[];
  /**
   * Semaphore only: the acquirer that holds the semaphore's internal mutex (`locks/`). It takes a
   * lease as soon as one is free; its lease node, once created, is among the holders and may
   * still be waiting for a free slot.
   */
  readonly admitting: LockNode | null;
  /** Who waits, in the order they will be served. */
  readonly waiting: readonly LockNode[];
  /** How many children are no lock nodes of this lock. */
  readonly others: number;
}

/**
 * Which of a read-write lock's nodes (sorted) hold, by the recipe's rules: a writer holds at the
 * head; a reader holds when no writer is ahead of it. A write node and the read node of its
 * downgrade share one sequence, so neither stands in the other's way.
 */
export function readWriteHolds(sorted: readonly string[]): boolean[] {
  return sorted.map((name, i) => {
    const sequence = readWriteSequence(name);
    const ahead = sorted.slice(0, i).filter((other) => readWriteSequence(other) !== sequence);
    return isWriteNode(name) ? ahead.length === 0 : !ahead.some(isWriteNode);
  });
}

async function readLocks(reader: Reader, path: string): Promise<LocksReport> {
  const at = new Date();
  const now = at.getTime();
  const listing = await reader.list(path);
  const layout = layoutFor(path, 'a lock', listing, LAYOUTS_OF.locks);
  const base = { command: 'locks' as const, path, at: at.toISOString(), admitting: null, others: layout?.others.length ?? 0 };
  if (layout === undefined) return { ...base, recipe: null, holders: [], waiting: [] };

  if (layout.kind === 'semaphore') return readSemaphore(reader, path, listing, layout, now, base);
  if (layout.kind === 'mutex') {
    const nodes = await reader.nodes(path, sortLockNodes(layout.members, MUTEX_NAMES));
    const views = nodes.map((n) => ({ ...nodeView(n, now), mode: 'exclusive' as const }));
    return { ...base, recipe: 'mutex', holders: views.slice(0, 1), waiting: views.slice(1) };
  }
  const nodes = await reader.nodes(path, sortLockNodes(layout.members, READ_WRITE_NAMES));
  // Decide on the nodes still there: a node deleted meanwhile no longer stands in anyone's way.
  const holds = readWriteHolds(nodes.map((n) => n.name));
  const views = nodes.map((n) => ({ ...nodeView(n, now), mode: isWriteNode(n.name) ? ('write' as const) : ('read' as const) }));
  return { ...base, recipe: 'readWriteLock', holders: views.filter((_, i) => holds[i]), waiting: views.filter((_, i) => !holds[i]) };
}

async function readSemaphore(
  reader: Reader,
  path: string,
  listing: Listing,
  layout: Layout,
  now: number,
  base: Pick<LocksReport, 'command' | 'path' | 'at' | 'others'>,
): Promise<LocksReport> {
  const leasesPath = joinPath(path, SEMAPHORE_LEASES_PARENT);
  const locksPath = joinPath(path, SEMAPHORE_LOCKS_PARENT);
  const [leases, locks] = await Promise.all([
    layout.members.includes(SEMAPHORE_LEASES_PARENT) ? reader.listIfAny(leasesPath) : undefined,
    layout.members.includes(SEMAPHORE_LOCKS_PARENT) ? reader.listIfAny(locksPath) : undefined,
  ]);
  // `locks` and `leases` can be ordinary folders: only lease and lock nodes make a semaphore.
  if (!isSemaphorePart(SEMAPHORE_LEASES_PARENT, leases?.children ?? []) || !isSemaphorePart(SEMAPHORE_LOCKS_PARENT, locks?.children ?? [])) {
    throw notARecipe(path, 'a lock', listing, undefined);
  }
  const leaseNames = sortLockNodes(leases?.children ?? [], LEASE_NAMES);
  const lockNames = sortLockNodes(locks?.children ?? [], MUTEX_NAMES);
  const [leaseNodes, lockNodes] = await Promise.all([reader.nodes(leasesPath, leaseNames), reader.nodes(locksPath, lockNames)]);
  const holders = leaseNodes.map((n) => ({ ...nodeView(n, now, `${SEMAPHORE_LEASES_PARENT}/${n.name}`), mode: 'lease' as const }));
  const queue = lockNodes.map((n) => ({ ...nodeView(n, now, `${SEMAPHORE_LOCKS_PARENT}/${n.name}`), mode: 'lease' as const }));
  return { ...base, recipe: 'semaphore', holders, admitting: queue[0] ?? null, waiting: queue.slice(1) };
}

/** The one-line summary of a lock: its recipe, who holds it and how many wait. */
export function locksSummary(report: Pick<LocksReport, 'recipe' | 'holders' | 'waiting' | 'admitting'>): string {
  if (report.recipe === null) return 'no lock nodes: free';
  const name = LAYOUT_NAMES[report.recipe];
  const waiting = report.waiting.length + (report.admitting ? 1 : 0);
  if (report.recipe === 'semaphore') return `${name}: ${plural(report.holders.length, 'lease node')}, ${plural(waiting, 'acquirer')} in line`;
  if (report.holders.length === 0) return `${name}: free, ${waiting} waiting`;
  const held =
    report.recipe === 'readWriteLock'
      ? report.holders.some((n) => n.mode === 'write')
        ? 'write-locked'
        : `read-locked by ${plural(report.holders.length, 'reader')}`
      : 'held';
  return `${name}: ${held}, ${waiting} waiting`;
}

function render(report: LocksReport, nowMs: number): string {
  const later = sinceRead(report, nowMs);
  const lines = [`${report.path}  ${locksSummary(report)}`];
  const rows: string[][] = [];
  const withMode = report.recipe === 'readWriteLock';
  const row = (role: string, n: LockNode) => {
    const [name, session, age, data] = nodeCells(n, later);
    rows.push(withMode ? [role, n.mode, name, session, age, data] : [role, name, session, age, data]);
  };
  const holderRole = (n: LockNode) => (n.mode === 'lease' ? 'lease' : n.mode === 'write' ? 'writer' : n.mode === 'read' ? 'reader' : 'holder');
  for (const n of report.holders) row(holderRole(n), n);
  if (report.admitting) row('admitting', report.admitting);
  report.waiting.forEach((n, i) => row(`waiting ${i + 1}`, n));
  if (rows.length > 0) {
    const header = withMode ? ['ROLE', 'MODE', 'NODE', 'SESSION', 'AGE', 'DATA'] : ['ROLE', 'NODE', 'SESSION', 'AGE', 'DATA'];
    lines.push(...table([header, ...rows]).map((l) => `  ${l}`));
  }
  if (report.recipe === 'semaphore' && report.admitting) {
    lines.push('  (the admitting acquirer takes a lease when one is free: its lease node, once made, is listed and may still wait)');
  }
  if (report.others > 0) lines.push(`  ${plural(report.others, 'other child', 'other children')} ignored`);
  return lines.join('\n');
}

/** `zk-recipes locks <path>`. */
export const locksCommand: Command<LocksReport> = {
  name: 'locks',
  summary: 'the holder, then the queue in order (mutex, read-write lock, semaphore)',
  read: readLocks,
  render,
};
