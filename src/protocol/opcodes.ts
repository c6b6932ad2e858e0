/**
 * The numbers of ZooKeeper's client protocol: operation codes, the reserved xids, watch event
 * types and states, create flags and watcher types, as ZooKeeper's ZooDefs, ClientCnxn and
 * Watcher define them.
 */

/** Operation codes (ZooDefs.OpCode). */
export const OpCode = Object.freeze({
  notification: 0,
  create: 1,
  delete: 2,
  exists: 3,
  getData: 4,
  setData: 5,
  getACL: 6,
  setACL: 7,
  getChildren: 8,
  sync: 9,
  ping: 11,
  getChildren2: 12,
  check: 13,
  multi: 14,
  create2: 15,
  reconfig: 16,
  checkWatches: 17,
  removeWatches: 18,
  createContainer: 19,
  deleteContainer: 20,
  createTTL: 21,
  multiRead: 22,
  auth: 100,
  setWatches: 101,
  sasl: 102,
  getEphemerals: 103,
  getAllChildrenNumber: 104,
  setWatches2: 105,
  addWatch: 106,
  whoAmI: 107,
  createSession: -10,
  closeSession: -11,
  error: -1,
});

/**
 * Reserved xids: replies with these are not answers to numbered requests. Requests are numbered
 * from 1 and wrap from 2^31-1 back to 1, as the Java client numbers them. (The Java client's
 * SET_WATCHES_XID, -8, never reaches the wire: its SetWatches are numbered like any request.)
 */
export const Xid = Object.freeze({
  notification: -1,
  ping: -2,
  auth: -4,
});

/** The largest xid before numbering starts again at 1. */
export const MAX_XID = 0x7fffffff;

/** Node event types in a WatcherEvent (Watcher.Event.EventType). */
export const EventType = Object.freeze({
  none: -1,
  nodeCreated: 1,
  nodeDeleted: 2,
  nodeDataChanged: 3,
  nodeChildrenChanged: 4,
  dataWatchRemoved: 5,
  childWatchRemoved: 6,
  persistentWatchRemoved: 7,
});

/** Create flags (CreateMode). */
export const CreateFlags = Object.freeze({
  PERSISTENT: 0,
  EPHEMERAL: 1,
  PERSISTENT_SEQUENTIAL: 2,
  EPHEMERAL_SEQUENTIAL: 3,
  CONTAINER: 4,
  PERSISTENT_WITH_TTL: 5,
  PERSISTENT_SEQUENTIAL_WITH_TTL: 6,
});

/** Watcher types of removeWatches and checkWatches (Watcher.WatcherType). Persistent ones need a 3.9+ server. */
export const WatcherTypeCode = Object.freeze({
  children: 1,
  data: 2,
  any: 3,
  persistent: 4,
  persistentRecursive: 5,
});

/** Modes of addWatch (AddWatchMode). */
export const AddWatchModeCode = Object.freeze({
  PERSISTENT: 0,
  PERSISTENT_RECURSIVE: 1,
});

/** The error code of a reply (KeeperException.Code) that matters to the connection itself. */
export const ErrorCode = Object.freeze({
  ok: 0,
  connectionLoss: -4,
  noNode: -101,
  sessionExpired: -112,
  authFailed: -115,
  noWatcher: -121,
});
