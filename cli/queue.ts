import { epochOf } from '../recipes/queue/naming';
import { joinPath } from '../src/paths';
import { sinceRead, type Command, type Report } from './command';
import { ageOf, durationText, plural } from './format';
import { LAYOUTS_OF, LAYOUT_NAMES, itemSequence, layoutFor, queueOrderOf, queueVariantOf, type QueueVariant } from './layouts';
import type { Reader } from './NodeReader';

/** The oldest item of a queue: the one created first, whatever the order of consumption. */
export interface OldestItem {
  readonly name: string;
  readonly created: string;
  readonly ageMs: number;
}

/** What `zk-recipes queue <path>` reports. */
export interface QueueReport extends Report {
  readonly command: 'queue';
  /** The queue found; null for a node without children (an empty queue). */
  readonly recipe: 'distributedQueue' | 'simpleDistributedQueue' | null;
  /** DistributedQueue only: the variants its node names belong to. */
  readonly variants: readonly QueueVariant[];
  /** Item nodes waiting (a DistributedQueue node made by putMulti holds several items). */
  readonly depth: number;
  /** The item created first; null for an empty queue. */
  readonly oldest: OldestItem | null;
  /** The item a consumer takes next; null for an empty queue. */
  readonly next: string | null;
  /** Delay queues: items due now, items due later, and when the next of those is due (ISO 8601). */
  readonly delay: { readonly due: number; readonly later: number; readonly nextDueAt: string | null } | null;
  /**
   * The items are EPHEMERAL: this is a lock-safe queue's lock path (`lockPath`), one node per
   * item a consumer has in hand, not the queue itself.
   */
  readonly itemLocks: boolean;
  /** How many children are no items of this queue. */
  readonly others: number;
}

async function readQueue(reader: Reader, path: string): Promise<QueueReport> {
  const at = new Date();
  const now = at.getTime();
  const listing = await reader.list(path);
  const layout = layoutFor(path, 'a queue', listing, LAYOUTS_OF.queue);
  const base = {
    command: 'queue' as const,
    path,
    at: at.toISOString(),
    variants: [] as QueueVariant[],
    delay: null,
    itemLocks: false,
    others: layout?.others.length ?? 0,
  };
  if (layout === undefined) return { ...base, recipe: null, depth: 0, oldest: null, next: null };

  const simple = layout.kind === 'simpleQueue';
  const items = layout.members;
  const variantOf = new Map(items.map((name) => [name, simple ? undefined : queueVariantOf(name)]));
  const variants = new Set([...variantOf.values()].filter((v): v is QueueVariant => v !== undefined));
  const ordered = simple ? [...items].sort() : queueOrderOf(variants).sort(items);
  const bySequence = [...items].sort((a, b) => sequence(a) - sequence(b));
  function sequence(name: string): number {
    return itemSequence(name, simple ? 'simple' : (variantOf.get(name) as QueueVariant)) ?? Number.MAX_SAFE_INTEGER;
  }

  // The oldest item is the one with the lowest sequence; one consumed meanwhile gives way to the next.
  let oldest: OldestItem | null = null;
  let itemLocks = false;
  for (const name of bySequence) {
    const stat = await reader.stat(joinPath(path, name));
    if (stat === undefined) continue;
    oldest = { name, created: new Date(stat.ctime).toISOString(), ageMs: ageOf(stat.ctime, now) };
    itemLocks = stat.ephemeralOwner !== 0n;
    break;
  }

  let delay: QueueReport['delay'] = null;
  if (variants.has('delay')) {
    const dueAt = ordered.map(epochOf);
    const later = dueAt.filter((t) => t > now);
    delay = { due: dueAt.length - later.length, later: later.length, nextDueAt: later.length > 0 ? new Date(Math.min(...later)).toISOString() : null };
  }
  return {
    ...base,
    recipe: simple ? 'simpleDistributedQueue' : 'distributedQueue',
    variants: [...variants].sort(),
    depth: items.length,
    oldest,
    next: ordered[0] ?? null,
    delay,
    itemLocks,
  };
}

/** The one-line summary of a queue. */
export function queueSummary(report: Pick<QueueReport, 'recipe' | 'variants' | 'depth' | 'oldest' | 'itemLocks'>, laterMs = 0): string {
  if (report.recipe === null) return 'no items: depth 0';
  const name = LAYOUT_NAMES[report.recipe === 'simpleDistributedQueue' ? 'simpleQueue' : 'distributedQueue'];
  const variants = report.variants.length > 0 ? ` (${report.variants.join(', ')})` : '';
  const oldest = report.oldest ? `, oldest ${durationText(report.oldest.ageMs + laterMs)}` : '';
  if (report.itemLocks) return `${name} item locks: ${plural(report.depth, 'item')} in hand${oldest}`;
  return `${name}${variants}: depth ${report.depth}${oldest}`;
}

function render(report: QueueReport, nowMs: number): string {
  const later = sinceRead(report, nowMs);
  const lines = [`${report.path}  ${queueSummary(report, later)}`];
  if (report.itemLocks) lines.push('  (EPHEMERAL nodes: the lock path of a lock-safe queue, one node per item a consumer has in hand)');
  if (report.oldest) lines.push(`  oldest  ${report.oldest.name}  created ${report.oldest.created}`);
  if (report.next) lines.push(`  next    ${report.next}`);
  if (report.delay) {
    const nextDue = report.delay.nextDueAt ? `, the next in ${durationText(Math.max(0, Date.parse(report.delay.nextDueAt) - nowMs))}` : '';
    lines.push(`  delay   ${report.delay.due} due now, ${report.delay.later} later${nextDue}`);
  }
  if (report.others > 0) lines.push(`  ${plural(report.others, 'other child', 'other children')} ignored`);
  return lines.join('\n');
}

/** `zk-recipes queue <path>`. */
export const queueCommand: Command<QueueReport> = {
  name: 'queue',
  summary: 'the depth and the oldest item (DistributedQueue and its variants, SimpleDistributedQueue)',
  read: readQueue,
  render,
};
