import type { ZkClient } from '../src/client/ZkClient';
import { isZkError } from '../src/errors';
import { joinPath } from '../src/paths';
import type { Stat } from '../src/transport/Transport';
import { CliError, ExitCode } from './errors';

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
 * The reads the commands make. A one-shot command reads with a NodeReader; a live view with a
 * WatchedReader, whose reads also watch what they read. The commands do not know which.
 */
export abstract class Reader {
  /** The children of `path` and its stat; undefined when it does not exist. */
  abstract listIfAny(path: string): Promise<Listing | undefined>;
  /** A node with its data; undefined when it is gone. */
  abstract node(path: string, name: string): Promise<NodeInfo | undefined>;
  /** A node's stat, undefined when it does not exist. Never watched: listings see nodes come and go. */
  abstract stat(path: string): Promise<Stat | undefined>;

  /** The children of `path` and its stat; a CliError (NO_NODE) when it does not exist. */
  async list(path: string): Promise<Listing> {
    const listing = await this.listIfAny(path);
    if (listing === undefined) throw new CliError(ExitCode.NO_NODE, `${path} does not exist`);
    return listing;
  }

  /**
   * The children `names` of `parent` with their data, in the order given. A child deleted since
   * the listing is left out.
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
}

/** Plain reads, each bounded by the command's signal. */
export class NodeReader extends Reader {
  constructor(
    private readonly client: ZkClient,
    private readonly signal: AbortSignal | undefined,
  ) {
    super();
  }

  async listIfAny(path: string): Promise<Listing | undefined> {
    return missingAsUndefined(this.client.getChildrenWithStat(path, { signal: this.signal }));
  }

  async node(path: string, name: string): Promise<NodeInfo | undefined> {
    const read = await missingAsUndefined(this.client.getData(path, { signal: this.signal }));
    return read && { name, path, stat: read.stat, data: read.data };
  }

  async stat(path: string): Promise<Stat | undefined> {
    return (await this.client.exists(path, { signal: this.signal })) ?? undefined;
  }
}

/** The value of a read; undefined for NONODE. */
export async function missingAsUndefined<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    if (isZkError(err, 'NONODE')) return undefined;
    throw err;
  }
}
