import debug from 'debug';
import type { ZkClient } from '../src/client/ZkClient';
import type { Stat } from '../src/transport/Transport';
import { raceAbort } from '../src/util/async';
import { ChildrenWatch, NodeWatch } from '../src/watch';
import { Reader, type Listing, type NodeInfo } from './NodeReader';

const log = debug('zk-recipes:cli:watch');

/** What the reader needs of a ChildrenWatch or a NodeWatch. */
type Watching<T> = Pick<ChildrenWatch | NodeWatch, 'isClosed' | 'close'> & { readonly value: T | null | undefined; start(): Promise<T | null> };

/**
 * The reads of a live view (`zk-recipes watch`), each through the project's watches: a
 * ChildrenWatch on each node listed and a NodeWatch on each node read, kept from one reading of
 * the view to the next. A node already watched is answered from the watch, without a request;
 * a watch that sees a change calls `onChange`, and the view reads again. Watches a reading did not
 * use (nodes gone, or no longer shown) are closed after it, so they do not pile up.
 */
export class WatchedReader extends Reader {
  private readonly watches = new Map<string, Watching<unknown>>();
  private used = new Set<string>();
  private signal: AbortSignal | undefined;

  /**
   * `onChange` is called on every change a watch sees; it must not throw. `stop` ends every watch
   * when it aborts.
   */
  constructor(
    private readonly client: ZkClient,
    private readonly onChange: () => void,
    private readonly stop: AbortSignal,
  ) {
    super();
    stop.addEventListener('abort', () => void this.closeAll(), { once: true });
  }

  /** How many nodes are watched. */
  get size(): number {
    return this.watches.size;
  }

  /**
   * One reading of the view, whose new watches must answer within `signal`. After a reading
   * that succeeded, the watches it did not use are closed.
   */
  async reading<T>(signal: AbortSignal, read: (reader: Reader) => Promise<T>): Promise<T> {
    this.used = new Set();
    this.signal = signal;
    const result = await read(this);
    await Promise.all([...this.watches].filter(([key]) => !this.used.has(key)).map(([key, watch]) => this.close(key, watch)));
    return result;
  }

  async listIfAny(path: string): Promise<Listing | undefined> {
    const value = await this.watched<Listing>(`children ${path}`, () => new ChildrenWatch(this.client, path, () => this.onChange(), this.options()));
    return value ?? undefined;
  }

  async node(path: string, name: string): Promise<NodeInfo | undefined> {
    const value = await this.watched<{ data: Buffer; stat: Stat }>(`data ${path}`, () => new NodeWatch(this.client, path, () => this.onChange(), this.options()));
    return value ? { name, path, stat: value.stat, data: value.data } : undefined;
  }

  async stat(path: string): Promise<Stat | undefined> {
    return (await this.client.exists(path, { signal: this.signal })) ?? undefined;
  }

  private options() {
    return { signal: this.stop, onError: (err: unknown) => log('a watch failed to read, trying again: %s', String(err)) };
  }

  /** The value of the watch under `key`, started now if there is none. */
  private async watched<T>(key: string, create: () => Watching<T>): Promise<T | null> {
    this.used.add(key);
    let watch = this.watches.get(key) as Watching<T> | undefined;
    // A running watch holds the node's latest value: the change that made it new called onChange.
    if (watch !== undefined && !watch.isClosed && watch.value !== undefined) return watch.value;
    if (watch === undefined || watch.isClosed) {
      watch = create();
      this.watches.set(key, watch);
    }
    try {
      // A new watch's first read is bounded by this reading's signal; the watch itself lives on.
      return await raceAbort(watch.start(), this.signal);
    } catch (err) {
      // A watch whose first read failed is closed: the next reading starts a new one.
      if (watch.isClosed) this.watches.delete(key);
      throw err;
    }
  }

  private async close(key: string, watch: Watching<unknown>): Promise<void> {
    this.watches.delete(key);
    await watch.close();
  }

  private async closeAll(): Promise<void> {
    await Promise.all([...this.watches].map(([key, watch]) => this.close(key, watch)));
  }
}
