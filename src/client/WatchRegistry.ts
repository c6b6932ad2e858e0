import debug from 'debug';
import type { Transport, WatchEvent, Watcher } from '../transport/Transport';

const log = debug('zk-recipes:client:watch');

interface Entry {
  readonly transport: Transport;
  readonly path: string;
  fire(event: WatchEvent): void;
}

/**
 * The client's one-shot watches, so their owners hear when their session ends: the server drops a
 * session's watches silently, and a watcher that never fires would wait forever. Each watcher
 * fires once: with the server's event, or with 'sessionLost'. Watchers run inside a try: one that
 * throws is logged, never passed on.
 */
export class WatchRegistry {
  private readonly entries = new Set<Entry>();

  /**
   * Registers `watcher` for a read on `t` and returns the watcher to hand to the transport, and a
   * function that forgets it (for reads whose watch the server did not set).
   */
  register(t: Transport, fullPath: string, watcher: Watcher, toUser: (event: WatchEvent) => WatchEvent): { native: Watcher; forget: () => void } {
    let fired = false;
    const entry: Entry = {
      transport: t,
      path: fullPath,
      fire: (event) => {
        if (fired) return;
        fired = true;
        this.entries.delete(entry);
        try {
          watcher(toUser(event));
        } catch (err) {
          log('a watcher on %s threw: %O', fullPath, err);
        }
      },
    };
    this.entries.add(entry);
    return { native: entry.fire, forget: () => this.entries.delete(entry) };
  }

  /** Tells the watchers set through `t` that their session ended. */
  endFor(t: Transport | undefined): void {
    for (const entry of [...this.entries]) if (entry.transport === t) entry.fire({ type: 'sessionLost', path: entry.path });
  }

  /** Tells every watcher that its session ended (the client closed). */
  endAll(): void {
    for (const entry of [...this.entries]) entry.fire({ type: 'sessionLost', path: entry.path });
  }
}
