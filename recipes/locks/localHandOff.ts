import type { ZkClient } from '../../src/recipeKit';

/** A waiter on a node: told once the node holds, and (`onStands`) once it starts to wait in line here. */
interface Listener {
  readonly onHeld: () => void;
  readonly onStands: (() => void) | undefined;
}

/**
 * The hand-off within one process: how a holder tells a waiter of the same process, waiting on
 * the holder's node, that the node holds, with no write (the hand-off mark's job across processes,
 * see handOffMark.ts). The waiter then takes the lock on that node's deletion with no listing: a
 * node that held had nothing before it, and no node created later sorts before it.
 *
 * Node services often contend with themselves: request handlers of one process, each with its own
 * node in the line (see InterProcessMutex). Curator's waiter, and ours across processes, lists the
 * children on every wake-up; here the process already knows the node ahead held, since it won it.
 * A claim on a deletion alone needs our own node watched (see Contender): a waiter whose node ahead
 * stands in line here watches it from the start of its wait, beside the node ahead, so that the
 * word of the win leaves no read between the node ahead's deletion and the claim. Started on the
 * word instead, that read ran beside the holder's delete, and the claim waited for whichever
 * answered last: hand-off p50 at 100 waiters, no hold, 343–541 µs, against 323–344 µs with the
 * watch started with the wait (one server, waiters in one process, warm).
 *
 * - **Which nodes**: a node is told about only by the attempt that won it, while the connection
 *   was trusted (the win proven by a read, or by events over a connection trusted since: see
 *   Contender). A node that held held, whatever became of it since (released, or gone with its
 *   session): once it is deleted, the node just behind it is first.
 * - **Names**: a node is known by its client's namespace and its path. The path is protected, so
 *   it carries a UUID made for that one create: two nodes never share a name, in one ensemble or
 *   across several.
 * - **Nothing kept**: a waiter listens from the start of its wait on the node ahead to its end,
 *   and a win tells the listeners there are, then forgets them. A win with no listener keeps
 *   nothing; a waiter that starts listening after the win it waits for is not told, and lists.
 *
 * Only for a lock with one holder whose waiters each watch the node just ahead (see
 * `LockDriver.handOff`).
 */
const listeners = new Map<string, Set<Listener>>();
/** The nodes of this process's contenders, from their join until they win or leave: how many of each. */
const inLine = new Map<string, number>();
/** Off only in tests that stand in for several processes with one (see `handOffsWithinProcess`). */
let enabled = true;

function keyOf(client: ZkClient, path: string): string {
  // A NUL never appears in a ZooKeeper path.
  return `${client.namespace ?? ''}\u0000${path}`;
}

/**
 * Tells the waiters of this process that wait on `node` that it holds. Returns whether any did:
 * the waiter behind the node then needs no mark.
 */
export function tellHeld(client: ZkClient, node: string): boolean {
  if (listeners.size === 0 || !enabled) return false;
  const key = keyOf(client, node);
  const waiting = listeners.get(key);
  if (waiting === undefined) return false;
  listeners.delete(key);
  for (const listener of waiting) listener.onHeld();
  return true;
}

/**
 * Records that a contender of this process stands in line with `node`, until the returned
 * function is called (once it wins, or leaves). A waiter behind a node of this process watches
 * its own node from the start of its wait, in the same write as the node ahead: when the word of
 * the win comes, nothing is left to read. A waiter that started to wait on `node` before it
 * stood here (a line forming all at once) is told now, and starts that watch then.
 */
export function standsHere(client: ZkClient, node: string): () => void {
  const key = keyOf(client, node);
  inLine.set(key, (inLine.get(key) ?? 0) + 1);
  const waiting = enabled && listeners.size > 0 ? listeners.get(key) : undefined;
  if (waiting !== undefined) for (const listener of waiting) listener.onStands?.();
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const left = (inLine.get(key) ?? 1) - 1;
    if (left > 0) inLine.set(key, left);
    else inLine.delete(key);
  };
}

/** Whether `node` is a contender's of this process, in line now (see `standsHere`). */
export function isHere(client: ZkClient, node: string): boolean {
  return enabled && inLine.size > 0 && inLine.has(keyOf(client, node));
}

/**
 * Calls `onHeld` once, if `node` is won in this process from now on, and `onStands` each time a
 * contender of this process starts to stand in line with it (see `standsHere`); returns what stops
 * listening.
 */
export function listenHeld(client: ZkClient, node: string, onHeld: () => void, onStands?: () => void): () => void {
  const key = keyOf(client, node);
  let waiting = listeners.get(key);
  if (waiting === undefined) {
    waiting = new Set();
    listeners.set(key, waiting);
  }
  const listener: Listener = { onHeld, onStands };
  waiting.add(listener);
  const set = waiting;
  return () => {
    set.delete(listener);
    if (set.size === 0 && listeners.get(key) === set) listeners.delete(key);
  };
}

/**
 * @internal For tests whose sessions stand in for separate processes (the hand-off mark's): off,
 * no win is told, and every waiter behind a holder learns of it as one in another process would.
 */
export function handOffsWithinProcess(on: boolean): void {
  enabled = on;
}

/** How many nodes have listeners, and how many stand in line: for tests, which check that nothing is left behind. */
export function listenedNodes(): number {
  return listeners.size + inLine.size;
}
