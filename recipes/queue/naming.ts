/**
 * Node names of the queues, as Curator writes them, and the order each queue consumes them in.
 *
 * Every DistributedQueue node is PERSISTENT_SEQUENTIAL, so ZooKeeper appends the parent's counter
 * as 10 zero-padded digits to the name the producer asks for:
 * - FIFO: `queue-NNNNNNNNNN`;
 * - priority: `queue-` + ('1' for priority >= 0, else '0') + the priority as 8 upper-case hex
 *   digits of its 32-bit two's complement, + the sequence (so -1 is `0FFFFFFFF`);
 * - delay: `queue-|` + the epoch millis as upper-case hex, at least 8 digits, + `|`, + the sequence;
 * - id: `queue-|<id>|` + the sequence, with every `/` and `|` in the id replaced by `_`.
 *
 * **Sequence wrap-around.** Past 2^31-1 changes to the queue node's children, ZooKeeper's counter
 * wraps to a negative number, written as `-2147483648`: lexical order then breaks, for Curator and
 * for zk-recipes alike (the FIFO, priority and id orders sort by that text). Each put and each
 * consumed item counts, so it takes about a billion items through one queue node; delete and
 * re-create the queue node (which restarts its counter) well before that.
 */
import { validatePositiveInt, validateString } from '../../src/recipeKit';

/** What every DistributedQueue node name starts with (Curator's QUEUE_ITEM_NAME). */
export const QUEUE_ITEM_NAME = 'queue-';
/** What every SimpleDistributedQueue node name starts with. */
export const SIMPLE_QUEUE_ITEM_NAME = 'qn-';
const SEPARATOR = '|';

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * Curator's priority text: '1' for priority >= 0, else '0', then the 32-bit two's complement as 8
 * upper-case hex digits (`%08X`). Lexical order of the text is numeric order of the priority, so
 * lower priorities are consumed first: -5 before -1 before 0 before 7.
 *
 * @throws InvalidArgumentError unless priority is a 32-bit signed integer (Java's int).
 */
export function priorityToString(priority: number): string {
  const p = validatePositiveInt(priority, 'priority', { min: INT32_MIN, max: INT32_MAX });
  return `${p >= 0 ? '1' : '0'}${(p >>> 0).toString(16).toUpperCase().padStart(8, '0')}`;
}

/**
 * Curator's delay text: `|` + the epoch millis as upper-case hex, at least 8 digits (`%08X`), + `|`.
 *
 * @throws InvalidArgumentError unless the epoch is an integer from 1 to Number.MAX_SAFE_INTEGER
 *   (Curator refuses 0 and negative epochs too).
 */
export function epochToString(delayUntilEpochMs: number): string {
  const epoch = validatePositiveInt(delayUntilEpochMs, 'delayUntilEpochMs', { min: 1 });
  return `${SEPARATOR}${epoch.toString(16).toUpperCase().padStart(8, '0')}${SEPARATOR}`;
}

/**
 * The epoch millis in a delay queue name, read as Curator reads it: the hex text between the last
 * two `|`; 0 (deliver now) when there is none or it is not hex.
 */
export function epochOf(name: string): number {
  const second = name.lastIndexOf(SEPARATOR);
  const first = second > 0 ? name.lastIndexOf(SEPARATOR, second - 1) : -1;
  if (first > 0 && second > first + 1) {
    const text = name.slice(first + 1, second);
    if (/^[0-9A-Fa-f]+$/.test(text)) return parseInt(text, 16);
  }
  return 0;
}

/** The id as it goes into a node name: every `/` and `|` becomes `_` (Curator's fixId). */
export function fixId(id: string): string {
  return validateString(id, 'id').replace(/[/|]/g, '_');
}

/**
 * The id in an id queue name, and the name without `|<id>|` (what the id queue sorts by), as
 * Curator parses them: from the first `|` to the next. A name without two `|` is its own id.
 */
export function parseId(name: string): { id: string; cleaned: string } {
  const first = name.indexOf(SEPARATOR);
  const second = first < 0 ? -1 : name.indexOf(SEPARATOR, first + 1);
  if (first < 0 || second < 0) return { id: name, cleaned: name };
  return { id: name.slice(first + 1, second), cleaned: name.slice(0, first) + name.slice(second + 1) };
}

/**
 * A queue variant's naming and ordering: the only thing in which the FIFO, priority, delay and id
 * queues differ. The consumer engine is the same for all.
 */
export interface QueueOrder {
  /** For logs and errors. */
  readonly kind: 'fifo' | 'priority' | 'delay' | 'id';
  /**
   * Whether to list the children again before each new item when they changed since the last
   * listing: a newer node can sort before the ones already listed (a higher priority, an earlier
   * time). FIFO and id queues only ever gain nodes at the end, so they finish what they listed.
   */
  readonly refreshOnChange: boolean;
  /** `queue-` names in the order they are consumed. */
  sort(names: readonly string[]): string[];
  /** The name before the sequence for a failed item's copy: never longer than the original's (CURATOR-56). */
  requeuePrefix(name: string): string;
  /** Epoch millis before which the item is not delivered; 0 for at once. */
  dueAt(name: string): number;
}

const lexical = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** FIFO: lexical order of the names, that is, of the sequence. A failed item goes back as `queue-`. */
export const FIFO_ORDER: QueueOrder = Object.freeze({
  kind: 'fifo' as const,
  refreshOnChange: false,
  sort: (names: readonly string[]) => [...names].sort(lexical),
  requeuePrefix: () => QUEUE_ITEM_NAME,
  dueAt: () => 0,
});

/** A priority name with its sequence (10 digits, or a wrapped negative one). */
const PRIORITY_NAME = /^(queue-[01][0-9A-F]{8})(?:\d{10}|-\d{9,10})$/;

/**
 * Priority: lexical order of the names, so lower priorities first and FIFO within one priority.
 * A failed item goes back with its priority (Curator's requeue drops it to a plain `queue-`).
 */
export const PRIORITY_ORDER: QueueOrder = Object.freeze({
  kind: 'priority' as const,
  refreshOnChange: true,
  sort: (names: readonly string[]) => [...names].sort(lexical),
  requeuePrefix: (name: string) => PRIORITY_NAME.exec(name)?.[1] ?? QUEUE_ITEM_NAME,
  dueAt: () => 0,
});

/**
 * Delay: by the epoch in the name (nodes without one first), ties by name, that is, by sequence.
 * A failed item goes back with its epoch, already past (Curator's requeue drops it: delivered at once either way).
 */
export const DELAY_ORDER: QueueOrder = Object.freeze({
  kind: 'delay' as const,
  refreshOnChange: true,
  sort: (names: readonly string[]) => [...names].sort((a, b) => epochOf(a) - epochOf(b) || lexical(a, b)),
  requeuePrefix: (name: string) => {
    const epoch = epochOf(name);
    return epoch > 0 ? `${QUEUE_ITEM_NAME}${epochToString(epoch)}` : QUEUE_ITEM_NAME;
  },
  dueAt: (name: string) => epochOf(name),
});

/** Id: by the name without `|<id>|`, that is, by sequence. A failed item goes back with its id, as in Curator. */
export const ID_ORDER: QueueOrder = Object.freeze({
  kind: 'id' as const,
  refreshOnChange: false,
  sort: (names: readonly string[]) => [...names].sort((a, b) => lexical(parseId(a).cleaned, parseId(b).cleaned) || lexical(a, b)),
  requeuePrefix: (name: string) => {
    const { id, cleaned } = parseId(name);
    return id === cleaned ? QUEUE_ITEM_NAME : `${QUEUE_ITEM_NAME}${SEPARATOR}${id}${SEPARATOR}`;
  },
  dueAt: () => 0,
});

/** The node name (before the sequence) of an id queue item. */
export function idItemName(id: string): string {
  const fixed = fixId(id);
  return `${QUEUE_ITEM_NAME}${SEPARATOR}${fixed}${SEPARATOR}`;
}

/** The node name (before the sequence) of a priority queue item. */
export function priorityItemName(priority: number): string {
  return `${QUEUE_ITEM_NAME}${priorityToString(priority)}`;
}

/** The node name (before the sequence) of a delay queue item. */
export function delayItemName(delayUntilEpochMs: number): string {
  return `${QUEUE_ITEM_NAME}${epochToString(delayUntilEpochMs)}`;
}
