import debug from 'debug';
import type { Transport, WatchEvent, Watcher } from '../transport/Transport';

const log = debug('zk-recipes:client:watch');

/** What a one-shot watch watches: a node's data (and existence), or its children. */
export type WatchKind = 'data' | 'children';

/**
 * One watch of a read: the watcher the transport holds (`native`), which calls the user's once.
 * One object and one closure per watched read (a waiter sets one on the node ahead of it).
 */
class Entry {
  private fired = false;
  /** The read that sets the watch has not answered yet: whether the server holds it is not known. */
  reading = true;
  /** A removal that came while the read was in flight, told whether the server set the watch. */
  private onAnswer: ((set: boolean) => void) | undefined;
  /** What the transport calls with the server's event, or with 'sessionLost'. */
  readonly native: Watcher;

  constructor(
    private readonly owner: OneShotWatches,
    readonly transport: Transport,
    readonly path: string,
    readonly kind: WatchKind,
    readonly user: Watcher,
    private readonly toUser: (event: WatchEvent) => WatchEvent,
  ) {
    this.native = (event) => this.fire(event);
  }

  private fire(event: WatchEvent): void {
    if (this.fired) return;
    this.forget();
    try {
      this.user(this.toUser(event));
    } catch (err) {
      log('a watcher on %s threw: %O', this.path, err);
    }
  }

  /** Never call the user again: for a read whose watch the server did not set, or a watch taken back. */
  forget(): void {
    this.fired = true;
    this.owner.unlist(this);
  }

  answered(set: boolean): void {
    this.reading = false;
    const told = this.onAnswer;
    this.onAnswer = undefined;
    told?.(set);
  }

  /** Whether the server set the watch, once the read in flight answers. */
  answer(): Promise<boolean> {
    return new Promise((resolve) => (this.onAnswer = resolve));
  }
}

/** A registered watch, as its read sees it. */
export interface OneShotWatch {
  /** The watcher to hand to the transport. */
  readonly native: Watcher;
  /** Forgets the watch for good (for a read whose watch the server did not set). */
  forget(): void;
  /** The read answered: `set`, whether the server set the watch (a removal may be waiting to know). */
  answered(set: boolean): void;
}

/**
 * The client's one-shot watches, so their owners hear when their session ends (the server drops a
 * session's watches silently, and a watcher that never fires would wait forever), and so a watch
 * can be taken back. Each watcher fires once: with the server's event, or with 'sessionLost'.
 * Watchers run inside a try: one that throws is logged, never passed on.
 */
export class OneShotWatches {
  /**
   * The watches by path, so that taking one back costs the same with 20,000 watches as with 2: the
   * one watch on a path, or a Set of them when there are several (a path most often has one).
   * Made with the first watch: a session that sets none (most idle ones) keeps no Map.
   */
  private byPath: Map<string, Entry | Set<Entry>> | undefined;

  /**
   * Registers `watcher` for a read on `t`: the watch's `native` goes to the transport; `toUser`
   * makes the user's event of the server's (made once per client: a watch adds no closure of its own).
   */
  register(t: Transport, fullPath: string, kind: WatchKind, watcher: Watcher, toUser: (event: WatchEvent) => WatchEvent): OneShotWatch {
    const entry = new Entry(this, t, fullPath, kind, watcher, toUser);
    const byPath = (this.byPath ??= new Map());
    const atPath = byPath.get(fullPath);
    if (atPath === undefined) byPath.set(fullPath, entry);
    else if (atPath instanceof Set) atPath.add(entry);
    else byPath.set(fullPath, new Set([atPath, entry]));
    return entry;
  }

  /** Takes back `watcher`'s watches on `fullPath` (of `kind`, or both): they will not be called. */
  private take(fullPath: string, watcher: Watcher, kind: WatchKind | 'any'): Entry[] {
    const taken: Entry[] = [];
    for (const entry of entriesOf(this.byPath?.get(fullPath))) {
      if (entry.user !== watcher || (kind !== 'any' && entry.kind !== kind)) continue;
      entry.forget();
      taken.push(entry);
    }
    return taken;
  }

  /**
   * Takes back `watcher`'s watches on `fullPath` (it will not be called), and removes them from the
   * server through `current`, the transport of the current session, connected or not, when it can
   * (local: a watch the server cannot be told of now is at least forgotten by the transport, so
   * that its next connection does not set it again). A watch whose read is still in flight is
   * removed in the background once the read answers, if the server set it: the transport learns
   * of a watch only from that answer, the server may hold it already, and a silent connection
   * would hold the answer back for as long as it takes to give up on it. Never rejects.
   */
  async remove(fullPath: string, watcher: Watcher, kind: WatchKind | 'any', current: Transport | undefined): Promise<void> {
    for (const taken of this.take(fullPath, watcher, kind)) {
      const { transport } = taken;
      if (!transport.removeWatches || transport !== current) continue;
      const removeWatch = async (): Promise<void> => {
        await transport.removeWatches?.(fullPath, taken.kind, taken.native, true).catch(() => undefined);
      };
      if (!taken.reading) await removeWatch();
      else
        void taken.answer().then(async (set) => {
          if (set) await removeWatch();
        });
    }
  }

  /** @internal `entry` fired or was forgotten. */
  unlist(entry: Entry): void {
    const byPath = this.byPath;
    const atPath = byPath?.get(entry.path);
    if (atPath === entry) byPath?.delete(entry.path);
    else if (atPath instanceof Set && atPath.delete(entry) && atPath.size === 0) byPath?.delete(entry.path);
  }

  /** Every watch kept now, a copy: telling a watcher takes its watch out. */
  private all(): Entry[] {
    const all: Entry[] = [];
    for (const atPath of this.byPath?.values() ?? []) all.push(...entriesOf(atPath));
    return all;
  }

  /** Tells the watchers set through `t` that their session ended. */
  endFor(t: Transport | undefined): void {
    for (const entry of this.all()) if (entry.transport === t) entry.native({ type: 'sessionLost', path: entry.path });
  }

  /** Tells every watcher that its session ended (the client closed). */
  endAll(): void {
    for (const entry of this.all()) entry.native({ type: 'sessionLost', path: entry.path });
  }
}

/** The watches kept on one path, a copy. */
function entriesOf(atPath: Entry | Set<Entry> | undefined): Entry[] {
  return atPath === undefined ? [] : atPath instanceof Set ? [...atPath] : [atPath];
}
