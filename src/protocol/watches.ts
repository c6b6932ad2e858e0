/**
 * The client side of watches, as the Java client's ZKWatchManager keeps them: per kind, the
 * watchers of each server path. The server keeps one watch per path and kind for the connection
 * and sends one notification; the tables turn it into a call of every local watcher registered
 * for that path and kind.
 */
import type { Watcher, WatcherKind } from '../transport/Transport';
import { EventType } from './opcodes';

/**
 * Where a watcher is kept: 'data' (getData, or exists on a node that was there), 'exist' (exists
 * on a missing node), 'child' (getChildren), and the persistent kinds (addWatch).
 */
export type WatchTable = 'data' | 'exist' | 'child' | 'persistent' | 'persistentRecursive';

const TABLES: readonly WatchTable[] = ['data', 'exist', 'child', 'persistent', 'persistentRecursive'];

/** Which tables a removeWatches / checkWatches kind covers (Watcher.WatcherType). */
const TABLES_OF_KIND: Readonly<Record<WatcherKind, readonly WatchTable[]>> = Object.freeze({
  children: ['child'],
  data: ['data', 'exist'],
  persistent: ['persistent'],
  persistentRecursive: ['persistentRecursive'],
  any: TABLES,
});

/**
 * The local tables whose watchers rely on the server's watch that removeWatches of `kind` removes:
 * the server keeps exists and getData watches in one table, children watches in another, and
 * (before 3.9) persistent ones in both.
 */
const SERVER_TABLES_OF_KIND: Readonly<Record<WatcherKind, readonly WatchTable[]>> = Object.freeze({
  data: ['data', 'exist', 'persistent', 'persistentRecursive'],
  children: ['child', 'persistent', 'persistentRecursive'],
  persistent: ['persistent'],
  persistentRecursive: ['persistentRecursive'],
  any: TABLES,
});

/** '/a/b/c', '/a/b', '/a', '/': the path and every ancestor. */
function* selfAndAncestors(path: string): Generator<string> {
  let p = path;
  for (;;) {
    yield p;
    if (p === '/') return;
    const slash = p.lastIndexOf('/');
    p = slash <= 0 ? '/' : p.slice(0, slash);
  }
}

/** A path's watchers in one table: the watcher itself when it is alone (most paths), else a Set of them. */
type Watchers = Watcher | Set<Watcher>;

function count(kept: Watchers): number {
  return typeof kept === 'function' ? 1 : kept.size;
}

function holds(kept: Watchers, watcher: Watcher): boolean {
  return typeof kept === 'function' ? kept === watcher : kept.has(watcher);
}

function addAll(to: Set<Watcher>, kept: Watchers): void {
  if (typeof kept === 'function') to.add(kept);
  else for (const w of kept) to.add(w);
}

/** What a table offers: a Map's reads. */
interface ReadonlyPathWatchers {
  readonly size: number;
  get(path: string): Watchers | undefined;
  keys(): Iterable<string>;
}

/**
 * One table's watchers by path. Its only path is kept inline, a Map made from the second path on:
 * most sessions watch one path (the ensemble's configuration, which the client follows), and an
 * empty Map with its hash table costs about 180 bytes, each of a thousand sessions.
 */
class PathWatchers implements ReadonlyPathWatchers {
  private lonePath: string | undefined;
  private loneWatchers: Watchers | undefined;
  private map: Map<string, Watchers> | undefined;

  get size(): number {
    return this.map !== undefined ? this.map.size : this.lonePath === undefined ? 0 : 1;
  }

  get(path: string): Watchers | undefined {
    if (this.map !== undefined) return this.map.get(path);
    return path === this.lonePath ? this.loneWatchers : undefined;
  }

  set(path: string, watchers: Watchers): void {
    if (this.map !== undefined) this.map.set(path, watchers);
    else if (this.lonePath === undefined || this.lonePath === path) {
      this.lonePath = path;
      this.loneWatchers = watchers;
    } else {
      this.map = new Map([[this.lonePath, this.loneWatchers as Watchers]]).set(path, watchers);
      this.lonePath = undefined;
      this.loneWatchers = undefined;
    }
  }

  delete(path: string): boolean {
    if (this.map !== undefined) return this.map.delete(path);
    if (path !== this.lonePath) return false;
    this.lonePath = undefined;
    this.loneWatchers = undefined;
    return true;
  }

  keys(): Iterable<string> {
    if (this.map !== undefined) return this.map.keys();
    return this.lonePath === undefined ? [] : [this.lonePath];
  }
}

const NONE: ReadonlyPathWatchers = new PathWatchers();

/**
 * The protocol connection's local watchers: one table per WatchTable, each mapping a server path
 * to its watchers. A notification is fanned out from here; SetWatches re-sends its paths after a
 * reconnect. (The client's OneShotWatches is the layer above: it follows one-shot watches by
 * session.)
 */
export class WatcherTables {
  /** Made on first use: most sessions keep few kinds of watch, and a thousand sessions add up. */
  private readonly maps: Partial<Record<WatchTable, PathWatchers>> = {};

  /** A table, read-only when it has never been used. */
  private table(table: WatchTable): ReadonlyPathWatchers {
    return this.maps[table] ?? NONE;
  }

  /** Keeps `watcher` for `path` in `table`. The same watcher twice on one path and table is kept once. */
  add(table: WatchTable, path: string, watcher: Watcher): void {
    const map = (this.maps[table] ??= new PathWatchers());
    const kept = map.get(path);
    // A lone watcher needs no Set: a thousand sessions each watching a path add up.
    if (kept === undefined) map.set(path, watcher);
    else if (typeof kept !== 'function') kept.add(watcher);
    else if (kept !== watcher) map.set(path, new Set([kept, watcher]));
  }

  /**
   * The watchers a server notification fires, the one-shot ones removed on the way (the Java
   * client's materialize):
   * - created, changed: data and exist watchers of the path;
   * - children changed: child watchers of the path;
   * - deleted: data, exist and child watchers of the path;
   * - each of them also: persistent watchers of the path, and persistent recursive watchers of the
   *   path and its ancestors (not for children changed: recursive watches promise no child events).
   */
  materialize(type: number, path: string): Set<Watcher> {
    const result = new Set<Watcher>();
    const take = (table: WatchTable) => {
      const kept = this.maps[table]?.get(path);
      if (kept === undefined) return;
      this.maps[table]?.delete(path);
      addAll(result, kept);
    };
    switch (type) {
      case EventType.nodeCreated:
      case EventType.nodeDataChanged:
        take('data');
        take('exist');
        break;
      case EventType.nodeChildrenChanged:
        take('child');
        break;
      case EventType.nodeDeleted:
        take('data');
        take('exist');
        take('child');
        break;
      default:
        return result;
    }
    const persistent = this.table('persistent').get(path);
    if (persistent !== undefined) addAll(result, persistent);
    const recursive = this.table('persistentRecursive');
    if (type !== EventType.nodeChildrenChanged && recursive.size > 0) {
      for (const p of selfAndAncestors(path)) {
        const kept = recursive.get(p);
        if (kept !== undefined) addAll(result, kept);
      }
    }
    return result;
  }

  /** Whether `path` has a watcher of `kind` (`watcher` itself, when given). */
  contains(path: string, kind: WatcherKind, watcher?: Watcher): boolean {
    return TABLES_OF_KIND[kind].some((table) => {
      const kept = this.table(table).get(path);
      return kept !== undefined && (watcher === undefined ? count(kept) > 0 : holds(kept, watcher));
    });
  }

  /**
   * Whether a watcher other than `watcher` relies on the server's watch on `path` that a
   * removeWatches of `kind` would remove.
   */
  othersNeed(path: string, kind: WatcherKind, watcher: Watcher): boolean {
    return SERVER_TABLES_OF_KIND[kind].some((table) => {
      const kept = this.table(table).get(path);
      return kept !== undefined && (count(kept) > 1 || !holds(kept, watcher));
    });
  }

  /** Removes the watchers of `kind` on `path` (only `watcher`, when given); returns those removed, each once. */
  remove(path: string, kind: WatcherKind, watcher?: Watcher): Watcher[] {
    const removed = new Set<Watcher>();
    for (const table of TABLES_OF_KIND[kind]) {
      const map = this.maps[table];
      const kept = map?.get(path);
      if (map === undefined || kept === undefined) continue;
      if (watcher === undefined) {
        addAll(removed, kept);
        map.delete(path);
      } else if (typeof kept === 'function') {
        if (kept === watcher) {
          removed.add(watcher);
          map.delete(path);
        }
      } else if (kept.delete(watcher)) {
        removed.add(watcher);
        if (kept.size === 0) map.delete(path);
      }
    }
    return [...removed];
  }

  /** The paths with watchers in `table`, for SetWatches. */
  paths(table: WatchTable): string[] {
    return [...this.table(table).keys()];
  }

  get isEmpty(): boolean {
    return TABLES.every((t) => this.table(t).size === 0);
  }

  /** Whether any persistent watch is kept (then SetWatches2 is needed to restore them). */
  get hasPersistent(): boolean {
    return this.table('persistent').size > 0 || this.table('persistentRecursive').size > 0;
  }

  /** Forgets every watcher (the session has ended). */
  clear(): void {
    for (const t of TABLES) delete this.maps[t];
  }
}

/** The most path characters in one SetWatches request, as the Java client batches them (128 KB). */
export const SET_WATCHES_MAX_CHARS = 128 * 1024;

/** One SetWatches (or SetWatches2) request re-registering watches after a reconnect. */
export interface WatchBatch {
  /** True when the batch holds persistent watches: it needs SetWatches2 (3.6+ servers). */
  readonly persistent: boolean;
  readonly dataWatches: string[];
  readonly existWatches: string[];
  readonly childWatches: string[];
  readonly persistentWatches: string[];
  readonly persistentRecursiveWatches: string[];
}

/**
 * The registry's paths cut into batches of about `maxChars` path characters (a batch may pass it
 * by its last path), in the Java client's order: data, exist, child, persistent, persistent
 * recursive. Empty when there is no watch.
 */
export function watchBatches(registry: WatcherTables, maxChars = SET_WATCHES_MAX_CHARS): WatchBatch[] {
  const queues: Array<[WatchTable, string[]]> = TABLES.map((t) => [t, registry.paths(t)]);
  const batches: WatchBatch[] = [];
  let q = 0;
  let i = 0;
  while (q < queues.length) {
    const lists: Record<WatchTable, string[]> = { data: [], exist: [], child: [], persistent: [], persistentRecursive: [] };
    let chars = 0;
    while (chars < maxChars && q < queues.length) {
      const [table, paths] = queues[q];
      if (i >= paths.length) {
        q++;
        i = 0;
        continue;
      }
      lists[table].push(paths[i]);
      chars += paths[i].length;
      i++;
    }
    if (chars === 0) break;
    batches.push({
      persistent: lists.persistent.length > 0 || lists.persistentRecursive.length > 0,
      dataWatches: lists.data,
      existWatches: lists.exist,
      childWatches: lists.child,
      persistentWatches: lists.persistent,
      persistentRecursiveWatches: lists.persistentRecursive,
    });
  }
  return batches;
}
