/** ZooKeeper's watching idiom, written once. */
export { NodeWatch, type NodeData } from './NodeWatch';
export { ChildrenWatch, type NodeChildren } from './ChildrenWatch';
export type { Watch, NodeWatchOptions, WatchListener } from './Watch';
