/**
 * Ordering of lock nodes. Curator sorts children by the text after the last occurrence of the
 * lock name: the 10-digit sequence ZooKeeper appends, so lexical order is numeric order.
 *
 * ZooKeeper's counter is a signed 32-bit int: past 2^31-1 it wraps to -2147483648 and the suffix
 * becomes 11 characters with a minus sign. Lexically (Curator, kazoo) those sort before every
 * earlier node, which breaks FIFO order at the wrap. zk-recipes reads the suffix as an unsigned
 * 32-bit number instead, so nodes created after the wrap sort after those created before it, and
 * FIFO order holds across one wrap. A Curator peer on the same path would disagree from the wrap
 * on: recreate such a lock's parent before its counter reaches 2^31 (a container parent restarts
 * its counter when the server reaps it).
 */

const WRAP = 2 ** 32;

/** The digits ZooKeeper appends to a sequential node's name (`%010d`), short of a wrap. */
const SUFFIX_DIGITS = 10;

/** The lock name last checked by `hasNonDigit`, and whether it has a character that is not a digit. */
let lastLockName = '';
let lastHasNonDigit = false;

/**
 * Whether a lock name that stands right before the last ten characters of a name, all digits, is
 * the last occurrence of it: true when it has a character that is not a digit, since no occurrence
 * that starts later can put that character on a digit.
 */
function hasNonDigit(lockName: string): boolean {
  if (lockName === lastLockName) return lastHasNonDigit;
  let found = false;
  for (let i = 0; i < lockName.length && !found; i++) {
    const c = lockName.charCodeAt(i);
    found = c < 48 || c > 57;
  }
  lastLockName = lockName;
  lastHasNonDigit = found;
  return found;
}

/** The sequence of a node name after `lockName`, as an unsigned 32-bit number; undefined if there is none. */
export function sequenceOf(name: string, lockName: string): number | undefined {
  // Every listing reads every name: the usual one (the lock name, then ten digits) is read with no
  // search for the lock name's last occurrence, which it is (see hasNonDigit).
  const suffixAt = name.length - SUFFIX_DIGITS;
  if (suffixAt >= lockName.length && hasNonDigit(lockName) && name.startsWith(lockName, suffixAt - lockName.length)) {
    let n = 0;
    for (let i = suffixAt; i < name.length; i++) {
      const digit = name.charCodeAt(i) - 48; // '0'
      if (digit < 0 || digit > 9) return searchedSequenceOf(name, lockName);
      n = n * 10 + digit;
    }
    return n > 2 ** 31 - 1 ? undefined : n;
  }
  return searchedSequenceOf(name, lockName);
}

/** `sequenceOf` by the text after the last occurrence of `lockName`, as Curator reads it. */
function searchedSequenceOf(name: string, lockName: string): number | undefined {
  const at = name.lastIndexOf(lockName);
  if (at < 0) return undefined;
  // The suffix must be /^-?\d{1,11}$/: read in place.
  let i = at + lockName.length;
  const negative = name.charCodeAt(i) === 45; // '-'
  if (negative) i++;
  const digits = name.length - i;
  if (digits < 1 || digits > 11) return undefined;
  let n = 0;
  for (; i < name.length; i++) {
    const digit = name.charCodeAt(i) - 48; // '0'
    if (digit < 0 || digit > 9) return undefined;
    n = n * 10 + digit;
  }
  if (negative) n = -n;
  if (n < -(2 ** 31) || n > 2 ** 31 - 1) return undefined;
  return n < 0 ? n + WRAP : n;
}

/** The sequence of a lock node under any of `lockNames` (the first that gives one); undefined when it is none. */
function lockKeyOf(name: string, lockNames: readonly string[]): number | undefined {
  for (const lockName of lockNames) {
    const key = sequenceOf(name, lockName);
    if (key !== undefined) return key;
  }
  return undefined;
}

/** Lock nodes with their sequences, in lock order: by sequence, then by name. */
function inLockOrder(keyed: Array<[number, string]>): string[] {
  keyed.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return keyed.map(([, child]) => child);
}

/** The children that are lock nodes of `lockNames`, in lock order. */
export function sortLockNodes(children: readonly string[], lockNames: readonly string[]): string[] {
  const keyed: Array<[number, string]> = [];
  for (const child of children) {
    const key = lockKeyOf(child, lockNames);
    if (key !== undefined) keyed.push([key, child]);
  }
  return inLockOrder(keyed);
}

/** Up to this many nodes before ours are put in order by insertion, with no sort's copies. */
const INSERTION_ORDER_MAX = 32;

/**
 * The lock nodes of `lockNames` among `children` that sort before `ours`, in lock order; undefined
 * when `ours` is not among them. What `sortLockNodes` gives before `ours`, without sorting the rest:
 * a waiter deep in a line lists the whole line, and only the few nodes ahead of it are sorted.
 */
export function lockNodesBefore(children: readonly string[], lockNames: readonly string[], ours: string): string[] | undefined {
  const ourKey = lockKeyOf(ours, lockNames);
  if (ourKey === undefined) return undefined;
  let found = false;
  const keys: number[] = [];
  const before: string[] = [];
  for (const child of children) {
    const key = lockKeyOf(child, lockNames);
    if (key === undefined || key > ourKey) continue;
    // Names are compared only at our sequence: most are of other sequences.
    if (key === ourKey) {
      if (child === ours) found = true;
      if (!(child < ours)) continue;
    }
    keys.push(key);
    before.push(child);
  }
  if (!found) return undefined;
  if (before.length > INSERTION_ORDER_MAX) return inLockOrder(keys.map((key, i) => [key, before[i]]));
  // A waiter near the front (the usual case) has a few nodes ahead of it.
  for (let i = 1; i < before.length; i++) {
    const key = keys[i];
    const name = before[i];
    let j = i - 1;
    for (; j >= 0 && (keys[j] > key || (keys[j] === key && before[j] > name)); j--) {
      keys[j + 1] = keys[j];
      before[j + 1] = before[j];
    }
    keys[j + 1] = key;
    before[j + 1] = name;
  }
  return before;
}
