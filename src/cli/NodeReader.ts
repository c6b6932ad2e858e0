import type { ZkClient } from '../client/ZkClient';
import { isZkError } from '../errors';
import { joinPath } from '../paths';
import type { Stat, Watcher } from '../transport/Transport';
import { CliError, ExitCode } from './errors';
import type { WatchKind, WatchSet } from './WatchSet';

/** A node as read: its name under its parent, full path, stat, and data when it was read. */
export interface NodeInfo {
  readonly name: string;
  readonly path: string;
  readonly stat: Stat;
  readonly data: Buffer | undefined;
}

/** A node's children and its own stat. */
export interface Listing {
  readonly children: string[];
  readonly stat: Stat;
}

/** How many reads one `nodes()` call keeps in flight. */
const PARALLEL_READS = 64;

/**
 * The reads every command makes, each bounded by the command's signal. In a live view each read
 * also sets a watch (through a WatchSet), so the view hears of every change to what it showed:
 * children watches on listed nodes, data watches on read nodes, and an exists watch on a path
 * that is missing.
 */
export class NodeReader {
  constructor(
    readonly client: ZkClient,
    readonly signal: AbortSignal | undefined,
    private readonly watches?: WatchSet,
  ) {}

  /** Whether the reads set watches. */
  get watching(): boolean {
    return this.watches !== undefined;
  }

  /** The children of `path` and its stat; a CliError (NO_NODE) when it does not exist. */
  async list(path: string): Promise<Listing> {
    const listing = await this.listIfAny(path);
    if (listing === undefined) throw new CliError(ExitCode.NO_NODE, `${path} does not exist`);
    return listing;
  }

  /**
   * The children of `path` and its stat; undefined when it does not exist. In a live view a
   * missing node gets an exists watch, so its creation is seen.
   */
  async listIfAny(path: string): Promise<Listing | undefined> {
    try {
      return await this.watched('children', path, (watcher) => this.client.getChildrenWithStat(path, { watcher, signal: this.signal }));
    } catch (err) {
      if (!isZkError(err, 'NONODE')) throw err;
    }
    if (this.watches) {
      // Created between the two reads: the exists watch is set all the same; read again.
      const stat = await this.watched('exists', path, (watcher) => this.client.exists(path, { watcher, signal: this.signal }));
      if (stat !== null) return this.listIfAny(path);
    }
    return undefined;
  }

  /** A node's stat, undefined when it does not exist. Sets no watch: listings see nodes come and go. */
  async stat(path: string): Promise<Stat | undefined> {
    return (await this.client.exists(path, { signal: this.signal })) ?? undefined;
  }

  /** A node with its data; undefined when it is gone. */
  async node(path: string, name: string): Promise<NodeInfo | undefined> {
    try {
      const { data, stat } = await this.watched('data', path, (watcher) => this.client.getData(path, { watcher, signal: this.signal }));
      return { name, path, stat, data };
    } catch (err) {
      if (isZkError(err, 'NONODE')) return undefined;
      throw err;
    }
  }

  /**
   * The children `names` of `parent` with their data, in the order given. A child deleted since
   * the listing is left out (the parent's children watch reports the deletion).
   */
  async nodes(parent: string, names: readonly string[]): Promise<NodeInfo[]> {
    const found: Array<NodeInfo | undefined> = new Array(names.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < names.length) {
        const i = next++;
        found[i] = await this.node(joinPath(parent, names[i]), names[i]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_READS, names.length) }, worker));
    return found.filter((n): n is NodeInfo => n !== undefined);
  }

  private watched<T>(kind: WatchKind, path: string, read: (watcher: Watcher | undefined) => Promise<T>): Promise<T> {
    return this.watches ? this.watches.read(kind, path, read) : read(undefined);
  }
}
