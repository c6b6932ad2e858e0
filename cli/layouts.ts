/**
 * Which recipe a node's children belong to, read from their names as Curator writes them (see
 * CURATOR-LAYOUTS.md), with the project's own naming and ordering helpers, so the CLI reads nodes
 * exactly as the recipes do.
 */
import { LEADER_LATCH_NAME, LEADER_SELECTOR_NAME } from '../recipes/leader/participants';
import { READ_LOCK_NAME, WRITE_LOCK_NAME, isWriteNode } from '../recipes/locks/InterProcessReadWriteLock';
import { SEMAPHORE_LEASES_PARENT, SEMAPHORE_LEASE_NAME, SEMAPHORE_LOCKS_PARENT } from '../recipes/locks/InterProcessSemaphoreV2';
import { sequenceOf, sortLockNodes } from '../recipes/locks/sequence';
import { CliError, ExitCode } from './errors';
import type { Listing } from './NodeReader';
import { DELAY_ORDER, FIFO_ORDER, ID_ORDER, PRIORITY_ORDER, QUEUE_ITEM_NAME, SIMPLE_QUEUE_ITEM_NAME, epochOf, type QueueOrder } from '../recipes/queue/naming';

/** The recipe layouts the CLI recognizes. */
export type LayoutKind = 'mutex' | 'readWriteLock' | 'semaphore' | 'leaderLatch' | 'distributedQueue' | 'simpleQueue';

/** What the children of a node are: the recipe most of them belong to, and the rest. */
export interface Layout {
  readonly kind: LayoutKind;
  /** The children that belong to the recipe, unsorted. */
  readonly members: readonly string[];
  /** Children that belong to no recipe, or to another one. */
  readonly others: readonly string[];
}

/** How each layout is named to people: Curator's class names. */
export const LAYOUT_NAMES: Readonly<Record<LayoutKind, string>> = Object.freeze({
  mutex: 'InterProcessMutex (or LeaderSelector)',
  readWriteLock: 'InterProcessReadWriteLock',
  semaphore: 'InterProcessSemaphoreV2',
  leaderLatch: 'LeaderLatch',
  distributedQueue: 'DistributedQueue',
  simpleQueue: 'SimpleDistributedQueue',
});

/** The command that shows each layout. A mutex is also a LeaderSelector, shown by `leader`. */
export const COMMAND_FOR: Readonly<Record<LayoutKind, 'locks' | 'leader' | 'queue'>> = Object.freeze({
  mutex: 'locks',
  readWriteLock: 'locks',
  semaphore: 'locks',
  leaderLatch: 'leader',
  distributedQueue: 'queue',
  simpleQueue: 'queue',
});

/** The layouts each command shows. */
export const LAYOUTS_OF: Readonly<Record<'locks' | 'leader' | 'queue', readonly LayoutKind[]>> = Object.freeze({
  locks: ['mutex', 'readWriteLock', 'semaphore'],
  leader: ['leaderLatch', 'mutex'],
  queue: ['distributedQueue', 'simpleQueue'],
});

/** The lock names of each lock-shaped layout, as `sortLockNodes` takes them. */
export const MUTEX_NAMES: readonly string[] = Object.freeze([LEADER_SELECTOR_NAME]);
export const READ_WRITE_NAMES: readonly string[] = Object.freeze([READ_LOCK_NAME, WRITE_LOCK_NAME]);
export const LATCH_NAMES: readonly string[] = Object.freeze([LEADER_LATCH_NAME]);
export const LEASE_NAMES: readonly string[] = Object.freeze([SEMAPHORE_LEASE_NAME]);
export { SEMAPHORE_LEASES_PARENT, SEMAPHORE_LOCKS_PARENT, sortLockNodes };

/**
 * The sequence of a lock node of `lockName`, by the recipes' own definition (`sequenceOf`, as
 * Curator's lock driver reads names): any name holding the lock name with a sequence after its
 * last occurrence, so `zzz-lock-0` is a contender, as the mutex counts it; undefined otherwise.
 */
export function lockSequence(name: string, lockName: string): number | undefined {
  return sequenceOf(name, lockName);
}

/**
 * Whether `children` can be the `locks/` or `leases/` folder of a semaphore: every child a lock
 * node (`lock-`) or a lease node (`lease-`) respectively.
 */
export function isSemaphorePart(folder: string, children: readonly string[]): boolean {
  const name = folder === SEMAPHORE_LEASES_PARENT ? SEMAPHORE_LEASE_NAME : LEADER_SELECTOR_NAME;
  return children.every((child) => lockSequence(child, name) !== undefined);
}

/** Whether a read-write lock's node is a write node, as the lock decides it. */
export { isWriteNode };

/** The sequence of a read-write lock node, whichever its kind, as the lock sorts it. */
export function readWriteSequence(name: string): number | undefined {
  return lockSequence(name, READ_LOCK_NAME) ?? lockSequence(name, WRITE_LOCK_NAME);
}

// ------------------------------------------------------------------------------------ queues

/** The DistributedQueue variants, told apart by their node names. */
export type QueueVariant = 'fifo' | 'priority' | 'delay' | 'id';

// Epochs between 2000 and 2200 are read as a delay queue's times; other text between `|` is an id.
const EPOCH_MIN_MS = 946_684_800_000;
const EPOCH_MAX_MS = 7_258_118_400_000;
const SEQUENCE = '(-?\\d{1,11})';
const FIFO_ITEM = new RegExp(`^${QUEUE_ITEM_NAME}${SEQUENCE}$`);
const PRIORITY_ITEM = new RegExp(`^${QUEUE_ITEM_NAME}[01][0-9A-F]{8}${SEQUENCE}$`);
const PIPED_ITEM = new RegExp(`^${QUEUE_ITEM_NAME}\\|([^|]*)\\|${SEQUENCE}$`);
const SIMPLE_ITEM = new RegExp(`^${SIMPLE_QUEUE_ITEM_NAME}${SEQUENCE}$`);

/** The variant a DistributedQueue node name belongs to; undefined for a name that is no queue item. */
export function queueVariantOf(name: string): QueueVariant | undefined {
  if (FIFO_ITEM.test(name) && sequenceOf(name, QUEUE_ITEM_NAME) !== undefined) return 'fifo';
  if (PRIORITY_ITEM.test(name) && itemSequence(name, 'priority') !== undefined) return 'priority';
  const piped = PIPED_ITEM.exec(name);
  if (piped === null || itemSequence(name, 'id') === undefined) return undefined;
  const epoch = /^[0-9A-F]{8,}$/.test(piped[1]) ? epochOf(name) : 0;
  return epoch >= EPOCH_MIN_MS && epoch <= EPOCH_MAX_MS ? 'delay' : 'id';
}

/** The sequence ZooKeeper appended to a queue item's name (its creation order under the queue node). */
export function itemSequence(name: string, variant: QueueVariant | 'simple'): number | undefined {
  switch (variant) {
    case 'fifo':
      return sequenceOf(name, QUEUE_ITEM_NAME);
    case 'simple':
      return sequenceOf(name, SIMPLE_QUEUE_ITEM_NAME);
    case 'priority':
      // The sequence follows `queue-` and the 9 characters of the priority.
      return sequenceOf(name, name.slice(0, QUEUE_ITEM_NAME.length + 9));
    default:
      return sequenceOf(name, '|');
  }
}

/** Whether a name is a SimpleDistributedQueue item. */
export function isSimpleQueueItem(name: string): boolean {
  return SIMPLE_ITEM.test(name) && sequenceOf(name, SIMPLE_QUEUE_ITEM_NAME) !== undefined;
}

/**
 * The order consumers take items of a queue whose items are of `variants`: the priority, delay
 * or id order when such names are present (a FIFO `queue-` name among them is a requeued item),
 * else FIFO.
 */
export function queueOrderOf(variants: ReadonlySet<QueueVariant>): QueueOrder {
  if (variants.has('priority')) return PRIORITY_ORDER;
  if (variants.has('delay')) return DELAY_ORDER;
  if (variants.has('id')) return ID_ORDER;
  return FIFO_ORDER;
}

// ------------------------------------------------------------------------------ recognition

/** The layout a single child name belongs to; semaphores are recognized from the parent's children together. */
function kindOfName(name: string): LayoutKind | undefined {
  if (readWriteSequence(name) !== undefined) return 'readWriteLock';
  if (lockSequence(name, LEADER_LATCH_NAME) !== undefined) return 'leaderLatch';
  if (lockSequence(name, LEADER_SELECTOR_NAME) !== undefined) return 'mutex';
  if (queueVariantOf(name) !== undefined) return 'distributedQueue';
  if (isSimpleQueueItem(name)) return 'simpleQueue';
  return undefined;
}

/**
 * The layout of a node with these children: the recipe most of them belong to. A node whose
 * children are `locks` and/or `leases` and nothing else is a semaphore (its grandchildren are
 * checked when it is read). Undefined when no child belongs to a recipe, the empty node included.
 */
export function recognize(children: readonly string[]): Layout | undefined {
  if (children.length > 0 && children.every((c) => c === SEMAPHORE_LOCKS_PARENT || c === SEMAPHORE_LEASES_PARENT)) {
    return { kind: 'semaphore', members: [...children], others: [] };
  }
  const byKind = new Map<LayoutKind, string[]>();
  for (const child of children) {
    const kind = kindOfName(child);
    if (kind !== undefined) byKind.set(kind, [...(byKind.get(kind) ?? []), child]);
  }
  let best: [LayoutKind, string[]] | undefined;
  for (const entry of byKind) if (best === undefined || entry[1].length > best[1].length) best = entry;
  if (best === undefined) return undefined;
  const members = new Set(best[1]);
  return { kind: best[0], members: best[1], others: children.filter((c) => !members.has(c)) };
}

/**
 * The layout under `path` if it is one of `kinds`; undefined for a node without children, which is
 * what a recipe's node is when nobody uses it (a free lock, an election without participants, an
 * empty queue). Its data says nothing: Curator writes the local IP address into a queue's node.
 *
 * @throws CliError (NOT_A_RECIPE) naming the recipe the children belong to, if any.
 */
export function layoutFor(path: string, what: string, listing: Listing, kinds: readonly LayoutKind[]): Layout | undefined {
  const layout = recognize(listing.children);
  if (layout !== undefined && kinds.includes(layout.kind)) return layout;
  if (listing.children.length === 0) return undefined;
  throw notARecipe(path, what, listing, layout);
}

/**
 * The error for a path that holds no recipe of the kind a command shows: it names the recipe the
 * children do belong to and the command that shows it, or some of the children.
 */
export function notARecipe(path: string, what: string, listing: Pick<Listing, 'children'>, layout: Layout | undefined): CliError {
  if (layout !== undefined) {
    const name = LAYOUT_NAMES[layout.kind];
    const article = /^[AEIOU]/.test(name) ? 'an' : 'a';
    return new CliError(ExitCode.NOT_A_RECIPE, `${path} is not ${what}: it holds ${article} ${name} (try: zk-recipes ${COMMAND_FOR[layout.kind]} ${path})`);
  }
  const { children } = listing;
  const sample = children.slice(0, 3).join(', ') + (children.length > 3 ? ', …' : '');
  return new CliError(ExitCode.NOT_A_RECIPE, `${path} is not ${what}: it holds no recipe nodes (children: ${sample})`);
}
