/** The options and results of the client's operations. */
import type { ConnectionState, PreviousConnectionState } from './ConnectionState';
import type { Session } from './Session';
import type { CreateMode, Stat, Watcher } from '../transport/Transport';

export interface OperationOptions {
  /** Aborts the wait; the operation rejects with `signal.reason`. */
  signal?: AbortSignal;
}

export interface CreateOptions extends OperationOptions {
  /** Node data; the client's `defaultData` (its `id`, `<hostname>:<pid>` by default) when omitted. */
  data?: Buffer | Uint8Array | string;
  /** Default 'PERSISTENT'. */
  mode?: CreateMode;
  /** Time to live, for the TTL modes only. */
  ttlMs?: number;
  /** Create missing parents: 'container' (Curator's creatingParentContainersIfNeeded) or 'persistent' (creatingParentsIfNeeded). */
  createParents?: 'container' | 'persistent';
  /**
   * Curator's protection: the node's name gets the prefix `_c_<uuid>-`, so that after a connection
   * loss during the create the client finds its own node again instead of creating a second one.
   */
  protected?: boolean;
  /**
   * Compress the data with the client's `compression` provider before it is sent, as Curator's
   * `.compressed()`: read it back with `getData(path, { compressed: true })`. Default: the client's
   * `enableCompression`. Compressed, data may be larger than MAX_DATA_BYTES as long as the
   * compressed request fits `maxRequestBytes`.
   */
  compressed?: boolean;
}

export interface DeleteOptions extends OperationOptions {
  /** Expected version; -1 (the default) matches any. */
  version?: number;
  /** Delete the children first, recursively. */
  recursive?: boolean;
  /** On a connection problem, keep retrying in the background until done or the session ends. The call still rejects. */
  guaranteed?: boolean;
  /** Resolve instead of rejecting when the node does not exist. */
  quietly?: boolean;
  /**
   * Delete only in this session, for an EPHEMERAL node of it: a retry in a later session would
   * act on whatever holds the path by then (another session's node, or one of ours made later).
   * Once the session has ended, the delete rejects with SessionLostError (unsent when it had ended
   * before): the node is gone with the session, or going (the server deletes it when it expires the
   * session). `quietly` does not cover that; a caller that only wants the node gone takes
   * SESSION_LOST as done. With `guaranteed`, the background retries run in this session only.
   */
  session?: Session;
}

export interface WatchOptions extends OperationOptions {
  /**
   * One-shot watch: called once with the next event on the node, or with 'sessionLost' when the
   * session ends. On the native transport it can also be called with 'notWatching' when the watch
   * could not be kept (the session lives on): read again, and watch anew.
   */
  watcher?: Watcher;
  /**
   * Read only in this session: once it has ended, reject with SessionLostError instead of retrying
   * in the next one. For reads whose meaning rests on an ephemeral node or a watch of that session:
   * a watch a retry set in a new session would wait on behalf of a node that went with the old one.
   */
  session?: Session;
}

export interface SetDataOptions extends OperationOptions {
  /** Expected version; -1 (the default) matches any. */
  version?: number;
  /**
   * Compress the data with the client's `compression` provider before it is sent, as Curator's
   * `.compressed()`. Default: the client's `enableCompression`.
   */
  compressed?: boolean;
}

/** Options of `setACL`. */
export interface SetAclOptions extends OperationOptions {
  /** Expected ACL version (the stat's `aversion`); -1 (the default) matches any. */
  version?: number;
}

/** Options of `getData`. */
export interface GetDataOptions extends WatchOptions {
  /**
   * Decompress the data read with the client's `compression` provider, as Curator's
   * `.decompressed()`; rejects with CompressionError when it is not compressed data (as Curator,
   * which fails with "Not in GZip format"). Default: the client's `enableCompression`. The stat
   * is the node's, and its `dataLength` the stored (compressed) size.
   */
  compressed?: boolean;
}

export interface BlockUntilConnectedOptions extends OperationOptions {
  /** Reject with ConnectionTimeoutError after this long; undefined waits as long as it takes. */
  timeoutMs?: number;
}

/** What `createAndListParent` resolves to. */
export interface CreatedAndListed {
  /** The new node's path, relative to the namespace. */
  path: string;
  /** The parent's children right after the create, unsorted; they include the new node. */
  children: string[];
  /** The parent's stat from the same read: `pzxid` is the zxid of its latest child change. */
  parentStat: Stat;
  /** The session the node was created in: for an ephemeral node, its owner. */
  session: Session;
  /** The new node's stat, when the transport returns it with the create (the protocol transport does). */
  stat?: Stat;
}

/** A 'stateChanged' listener. `previous` is 'LATENT' on the first event, which is always CONNECTED. */
export type StateListener = (state: ConnectionState, previous: PreviousConnectionState) => void;

/** The events of a ZkClient. */
export interface ZkClientEvents {
  /**
   * The connection state changed: CONNECTED, SUSPENDED, RECONNECTED, LOST. Each change once, in
   * order. The first is CONNECTED, with `previous` 'LATENT'.
   */
  stateChanged: [state: ConnectionState, previous: PreviousConnectionState];
  /** `close()` was called: the session has ended, and recipes built on the client stop. Once. */
  closed: [];
}
