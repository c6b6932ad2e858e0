import type { ZkClient } from '../client/ZkClient';
import type { Stat } from '../transport/Transport';
import { Watch, type NodeWatchOptions, type WatchListener, type WatchReader } from './Watch';

/** A node's children (unsorted) and its stat. */
export interface NodeChildren {
  readonly children: string[];
  readonly stat: Stat;
}

const CHILDREN: WatchReader<NodeChildren> = {
  kind: 'children',
  read: (client, path, { watcher, session, signal }) => client.getChildrenWithStat(path, { watcher, session, signal }),
  // The same node (czxid) at the same child change (pzxid).
  same: (a, b) => a.stat.czxid === b.stat.czxid && a.stat.pzxid === b.stat.pzxid,
};

/** Watches one node's children, or the node's creation while it is missing. See `Watch` for the rules. */
export class ChildrenWatch extends Watch<NodeChildren> {
  constructor(client: ZkClient, path: string, listener: WatchListener<NodeChildren>, options?: NodeWatchOptions) {
    super(client, path, CHILDREN, listener, options);
  }
}
