import { EventEmitter } from 'node:events';
import debug from 'debug';
import { UnsupportedError } from '../errors';
import type { AddWatchMode, WatchEvent, Watcher } from '../transport/Transport';
import { abortReason, raceAbort } from '../util/async';
import { emitSafely, subscribe } from '../util/events';
import type { Connection } from './Connection';
import type { Namespace } from './Namespace';
import type { ZkClientEvents } from './operationOptions';
import type { RetryLoop } from './RetryLoop';
import type { Session } from './Session';

const log = debug('zk-recipes:client:persistent');

/**
 * What a persistent watch reports: the server's events, and 'reset' when events may have been
 * missed (after a reconnect, and in a new session, where the watch is set again): whoever keeps a
 * view of the tree should read it again.
 */
export type PersistentWatchEvent = WatchEvent | { readonly type: 'reset'; readonly path: string; readonly reason: 'reconnected' | 'newSession' };

/** The events of a PersistentWatcher. */
export interface PersistentWatchEvents {
  event: [event: PersistentWatchEvent];
}

/** What a PersistentWatcher needs from the client. */
export interface PersistentWatchHost {
  /** Sets the watch on the server. */
  add(): Promise<void>;
  /** Takes it off the server, where it can. */
  remove(): Promise<void>;
  /** Told once the watch is closed, so the client stops following it. */
  detach(): void;
}

/**
 * A persistent watch (ZooKeeper 3.6's addWatch): it does not end when it fires, so it never needs
 * setting again, and with `recursive` it covers the whole subtree. Get one with `client.watch()`.
 * Events come to 'event' listeners, and to `for await` loops over the watch. On the protocol
 * transport it survives reconnects; since the server does not replay what changed meanwhile, a
 * 'reset' event says that events may have been missed (as Curator's PersistentWatcher does). After
 * a LOST it is set again in the new session, with a 'reset' too. `close()`, or the signal given to
 * `client.watch()`, ends it and removes it from the server.
 */
export class PersistentWatcher extends EventEmitter<PersistentWatchEvents> implements AsyncIterable<PersistentWatchEvent>, AsyncDisposable {
  private readonly buffered: PersistentWatchEvent[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private endReason: unknown;

  /** @internal Made by `client.watch()`. */
  constructor(
    readonly path: string,
    readonly mode: AddWatchMode,
    private readonly host: PersistentWatchHost,
  ) {
    super();
  }

  get isClosed(): boolean {
    return this.ended;
  }

  /** @internal Passes an event on: to the listeners, and to the loops over the watch. The client's only. */
  deliver(event: PersistentWatchEvent): void {
    if (this.ended) return;
    if (event.type === 'removed' || event.type === 'sessionLost') return;
    emitSafely(this, 'event', [event], (format, ...values) => log(`%s: ${format}`, this.path, ...values));
    this.buffered.push(event);
    this.wake?.();
  }

  /** Ends the watch and removes it from the server. Idempotent. */
  async close(): Promise<void> {
    if (this.ended) return;
    this.end(undefined);
    await this.host.remove().catch((err: unknown) => log('%s: removing the watch: %s', this.path, String(err)));
  }

  /** @internal Ends the watch with a reason: loops over it reject with it (undefined: they end). The client's only. */
  end(reason: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.endReason = reason;
    this.host.detach();
    this.wake?.();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<PersistentWatchEvent> {
    for (;;) {
      const next = this.buffered.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.ended) {
        if (this.endReason !== undefined) throw this.endReason;
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  /** @internal Ends the watch when `signal` aborts (loops over it reject with the reason), and removes it from the server. */
  endWith(signal: AbortSignal | undefined): void {
    if (!signal) return;
    const onAbort = () => {
      const reason = abortReason(signal);
      this.end(reason);
      void this.host.remove().catch(() => undefined);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  }
}

/** @deprecated Renamed PersistentWatcher, Curator's name for it; this alias goes in the next major release. */
export type PersistentWatch = PersistentWatcher;

/** The client parts a persistent watch works with. */
export interface PersistentWatchContext {
  readonly client: EventEmitter<ZkClientEvents>;
  readonly connection: Connection;
  readonly retry: RetryLoop;
  readonly namespace: Namespace;
}

/**
 * Sets a persistent watch on `path` and keeps it: a 'reset' after a reconnect in the same session,
 * set again (and a 'reset') in a new session, ended when the client closes.
 */
export async function startPersistentWatch(ctx: PersistentWatchContext, path: string, recursive: boolean, signal: AbortSignal | undefined): Promise<PersistentWatcher> {
  const { connection, retry, namespace } = ctx;
  const full = namespace.full(path);
  const mode: AddWatchMode = recursive ? 'PERSISTENT_RECURSIVE' : 'PERSISTENT';
  let session: Session | undefined;
  const stops: Array<() => void> = [];
  // One watcher for the watch's life: the server's events come to it, and it is what is removed.
  const native: Watcher = (event) => watch.deliver({ ...event, path: namespace.relative(event.path) });
  const add = () =>
    retry.run({ operation: 'addWatch', path, signal }, async (t, _attempt, s) => {
      if (!t.addWatch) throw new UnsupportedError('persistent watches need addWatch, which the native transport does not have: use the protocol transport');
      await t.addWatch(full, mode, native);
      session = s;
    });
  const watch: PersistentWatcher = new PersistentWatcher(path, mode, {
    add,
    remove: async () => {
      const t = connection.live()?.transport;
      if (t?.removeWatches && connection.session === session) await t.removeWatches(full, recursive ? 'persistentRecursive' : 'persistent', native, true);
    },
    detach: () => stops.forEach((stop) => stop()),
  });
  await raceAbort(add(), signal);
  stops.push(
    subscribe(ctx.client, 'stateChanged', (state) => {
      if (state !== 'RECONNECTED' || watch.isClosed) return;
      if (connection.session === session) return watch.deliver({ type: 'reset', path, reason: 'reconnected' });
      // The watch went with the old session: set it again in this one.
      add().then(
        () => watch.deliver({ type: 'reset', path, reason: 'newSession' }),
        (err: unknown) => watch.end(err),
      );
    }),
    subscribe(ctx.client, 'closed', () => watch.end(undefined)),
  );
  watch.endWith(signal);
  return watch;
}
