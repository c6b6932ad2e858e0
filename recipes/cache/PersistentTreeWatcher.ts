import debug from 'debug';
import { type PersistentWatcher, type PersistentWatchEvent, StepLoop, subscribe, type ZkClient } from '../../src/recipeKit';
import type { CacheScope } from './CacheScope';
import type { TreeWatcher, TreeWatcherSink } from './TreeWatcher';

const log = debug('zk-recipes:cache:persistent');

/**
 * The tree watcher of the protocol transport, as Curator's CuratorCache watches: one persistent
 * recursive watch on the root (ZooKeeper 3.6's addWatch), whatever the size of the tree.
 *
 * - The watch is set first, then the whole tree is read: nothing that changes between the two is
 *   missed.
 * - Every event, a deletion included, is passed on as a path to read: the reads go out after the
 *   event on the same connection, so a read never brings back what an event already removed (a
 *   read in flight when its node was deleted is followed by one more, which finds it gone).
 * - A 'reset' (a reconnect, or the watch set again in a new session: events may have been missed)
 *   reads the whole tree again; the cache reports only the differences.
 * - A watch that cannot be set (retries spent) is tried again after a back-off, and on the next
 *   CONNECTED or RECONNECTED.
 */
export class PersistentTreeWatcher implements TreeWatcher {
  private watch: PersistentWatcher | undefined;
  private closed = false;
  private initialized = false;
  private readonly starter: StepLoop;
  private stopListening: (() => void) | undefined;

  constructor(
    private readonly client: ZkClient,
    private readonly scope: CacheScope,
    private readonly sink: TreeWatcherSink,
  ) {
    this.starter = new StepLoop(() => this.setWatch(), { onError: (err) => this.sink.error(err) });
  }

  start(): void {
    this.stopListening = subscribe(this.client, 'stateChanged', (state) => {
      if ((state === 'CONNECTED' || state === 'RECONNECTED') && this.watch === undefined) this.starter.kick();
    });
    this.starter.kick();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopListening?.();
    this.starter.stop();
    const watch = this.watch;
    this.watch = undefined;
    await watch?.close();
  }

  private async setWatch(): Promise<void> {
    if (this.closed || this.watch !== undefined) return;
    const watch = await this.client.watch(this.scope.root, { recursive: true });
    if (this.closed) {
      await watch.close();
      return;
    }
    this.watch = watch;
    watch.on('event', (event) => this.heard(event));
    void this.loadAll();
  }

  /** Reads the whole tree; the first time, the cache is then initialized. */
  private async loadAll(): Promise<void> {
    await this.sink.rebuild();
    if (this.closed || this.initialized) return;
    this.initialized = true;
    this.sink.initialized();
  }

  private heard(event: PersistentWatchEvent): void {
    if (this.closed) return;
    if (event.type === 'reset') {
      log('%s: events may have been missed (%s): reading the tree again', this.scope.root, event.reason);
      void this.sink.rebuild();
      return;
    }
    if (event.type === 'notWatching') {
      // The server no longer holds the watch (it cannot be set again in this session): set a new one.
      log('%s: the watch ended; setting it again', this.scope.root);
      this.watch = undefined;
      this.starter.kick();
      return;
    }
    if (this.scope.decideFromEvent(event.path) === 'exclude') return;
    this.sink.changed(event.path);
  }
}

