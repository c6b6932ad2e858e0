import debug from 'debug';
import type { Transport, WatchEvent, Watcher } from '../transport/Transport';

const log = debug('zk-recipes:client:watch');

/** What a one-shot watch watches: a node's data (and existence), or its children. */
export type WatchKind = 'data' | 'children';

interface Entry {
  readonly transport: Transport;
  readonly path: string;
  readonly kind: WatchKind;
  readonly user: Watcher;
  readonly native: Watcher;
  /** Never call the user again. */
  cancel(): void;
}

/**
 * The client's one-shot watches, so their owners hear when their session ends (the server drops a
 * session's watches silently, and a watcher that never fires would wait forever), and so a watch
 * can be taken back. Each watcher fires once: with the server's event, or with 'sessionLost'.
 * Watchers run inside a try: one that throws is logged, never passed on.
 */
export class OneShotWatches {
  /**
   * The watches by path, so that taking one back costs the same with 20,000 watches as with 2.
   * Made with the first watch: a session that sets none (most idle ones) keeps no Map.
   */
  private byPath: Map<string, Set<Entry>> | undefined;

  /**
   * Registers `watcher` for a read on `t` and returns the watcher to hand to the transport, and a
   * function that forgets it for good (for reads whose watch the server did not set).
   */
  register(t: Transport, fullPath: string, kind: WatchKind, watcher: Watcher, toUser: (event: WatchEvent) => WatchEvent): { native: Watcher; forget: () => void } {
    let fired = false;
    const fire = (event: WatchEvent) => {
      if (fired) return;
      fired = true;
      this.unlist(entry);
      try {
        watcher(toUser(event));
      } catch (err) {
        log('a watcher on %s threw: %O', fullPath, err);
      }
    };
    const entry: Entry = {
      transport: t,
      path: fullPath,
      kind,
      user: watcher,
      native: fire,
      cancel: () => {
        fired = true;
        this.unlist(entry);
      },
    };
    const byPath = (this.byPath ??= new Map());
    const atPath = byPath.get(fullPath);
    if (atPath) atPath.add(entry);
    else byPath.set(fullPath, new Set([entry]));
    return { native: fire, forget: entry.cancel };
  }

  /** Takes back `watcher`'s watches on `fullPath` (of `kind`, or both): it will not be called. Returns what the transports hold for them. */
  take(fullPath: string, watcher: Watcher, kind: WatchKind | 'any'): Array<{ transport: Transport; kind: WatchKind; native: Watcher }> {
    const taken: Array<{ transport: Transport; kind: WatchKind; native: Watcher }> = [];
    for (const entry of [...(this.byPath?.get(fullPath) ?? [])]) {
      if (entry.user !== watcher || (kind !== 'any' && entry.kind !== kind)) continue;
      entry.cancel();
      taken.push({ transport: entry.transport, kind: entry.kind, native: entry.native });
    }
    return taken;
  }

  /**
   * Takes back `watcher`'s watches on `fullPath` (it will not be called), and removes them from the
   * server through `current`, the transport of the current session, connected or not, when it can
   * (local: a watch the server cannot be told of now is at least forgotten by the transport, so
   * that its next connection does not set it again). Never rejects.
   */
  async remove(fullPath: string, watcher: Watcher, kind: WatchKind | 'any', current: Transport | undefined): Promise<void> {
    for (const taken of this.take(fullPath, watcher, kind)) {
      if (!taken.transport.removeWatches || taken.transport !== current) continue;
      await taken.transport.removeWatches(fullPath, taken.kind, taken.native, true).catch(() => undefined);
    }
  }

  private unlist(entry: Entry): void {
    const atPath = this.byPath?.get(entry.path);
    if (atPath?.delete(entry) && atPath.size === 0) this.byPath?.delete(entry.path);
  }

  /** Every watch kept now, a copy: telling a watcher takes its watch out. */
  private all(): Entry[] {
    const all: Entry[] = [];
    for (const atPath of this.byPath?.values() ?? []) all.push(...atPath);
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
