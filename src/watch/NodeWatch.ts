import type { ZkClient } from '../client/ZkClient';
import type { Stat } from '../transport/Transport';
import { Watch, type NodeWatchOptions, type WatchListener, type WatchReader } from './Watch';

/** A node's data and stat. */
export interface NodeData {
  readonly data: Buffer;
  readonly stat: Stat;
}

const DATA: WatchReader<NodeData> = {
  kind: 'data',
  read: (client, path, options) => client.getData(path, options),
  // The same node (czxid) at the same change (mzxid): a re-created node is a new value.
  same: (a, b) => a.stat.czxid === b.stat.czxid && a.stat.mzxid === b.stat.mzxid,
};

/**
 * Watches one node's data, or its creation while it is missing. See `Watch` for the rules.
 *
 * @example
 * ```ts
 * const watch = new NodeWatch(client, '/config', (node) => apply(node?.data));
 * apply((await watch.start())?.data);
 * // later
 * await watch.close();
 * ```
 */
export class NodeWatch extends Watch<NodeData> {
  constructor(client: ZkClient, path: string, listener: WatchListener<NodeData>, options?: NodeWatchOptions) {
    super(client, path, DATA, listener, options);
  }
}
