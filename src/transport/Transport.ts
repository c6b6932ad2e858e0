/**
 * The small camelCase interface the rest of zk-recipes uses to talk to ZooKeeper. One Transport is
 * one session attempt. Two implementations: `ProtocolTransport` (src/protocol, our own wire client,
 * the default) and `NativeTransport` (the only module that imports the `zookeeper` binding, loaded
 * only when asked for). Tests may provide a fake.
 *
 * The operations past the core set (create2, multi, addWatch, ...) are optional: a transport that
 * cannot do one leaves the method undefined, and callers fall back (the native binding has none
 * of them).
 */

/** Node metadata, as ZooKeeper returns it. */
export interface Stat {
  /** zxid of the create. zxids are exact below 2^53 (epoch below 2^21), which ZooKeeper never reaches in practice. */
  readonly czxid: bigint;
  readonly mzxid: bigint;
  /** zxid of the last change to this node's children. */
  readonly pzxid: bigint;
  readonly ctime: number;
  readonly mtime: number;
  readonly version: number;
  readonly cversion: number;
  readonly aversion: number;
  /** Session id of the owner of an ephemeral node; 0n for other nodes. */
  readonly ephemeralOwner: bigint;
  readonly dataLength: number;
  readonly numChildren: number;
}

/** How a node is created. Names follow ZooKeeper's CreateMode. */
export type CreateMode =
  | 'PERSISTENT'
  | 'PERSISTENT_SEQUENTIAL'
  | 'EPHEMERAL'
  | 'EPHEMERAL_SEQUENTIAL'
  | 'CONTAINER'
  | 'PERSISTENT_WITH_TTL'
  | 'PERSISTENT_SEQUENTIAL_WITH_TTL';

/** One ACL entry. `perms` is a bit set of the `Perms` values. */
export interface ACL {
  readonly perms: number;
  readonly scheme: string;
  readonly id: string;
}

/** The open ACL (world:anyone, all permissions): what a node gets when no ACL provider says otherwise. */
export const OPEN_ACL: readonly ACL[] = Object.freeze([Object.freeze({ perms: 31, scheme: 'world', id: 'anyone' })]);

/** Permission bits for ACL entries. */
export const Perms = Object.freeze({
  READ: 1,
  WRITE: 2,
  CREATE: 4,
  DELETE: 8,
  ADMIN: 16,
  ALL: 31,
});

/**
 * What a watch reports.
 * - 'created', 'deleted', 'changed', 'child': the server's node events.
 * - 'sessionLost': synthesised by the client when the session ends (the server drops the session's
 *   watches then, silently).
 * - 'notWatching': the watch could not be kept (only the native transport, when it replaces a
 *   broken handle); the session lives on. Read again, and watch anew.
 * - 'removed': the watch was removed (removeWatches, or a persistent watch ended).
 */
export type WatchEventType = 'created' | 'deleted' | 'changed' | 'child' | 'notWatching' | 'sessionLost' | 'removed';

export interface WatchEvent {
  readonly type: WatchEventType;
  /** Full path on the server (the client strips its namespace before handing events to users). */
  readonly path: string;
  /** The zxid of the change, where the server sends it (3.9+ servers); undefined otherwise. */
  readonly zxid?: bigint;
}

export type Watcher = (event: WatchEvent) => void;

export interface TransportOptions {
  readonly connectString: string;
  readonly sessionTimeoutMs: number;
  /** Resume this session instead of starting a new one. Both or neither. */
  readonly sessionId?: bigint;
  readonly sessionPassword?: string;
  /** TLS options (node:tls ConnectionOptions); plain TCP when undefined. Only the protocol transport supports TLS. */
  readonly tls?: import('node:tls').ConnectionOptions;
  /** The largest frame accepted from the server, in bytes (the client's jute.maxbuffer). */
  readonly maxFrameBytes?: number;
}

/** How `addWatch` watches: the node itself (data, children, deletion), or the node and its whole subtree. */
export type AddWatchMode = 'PERSISTENT' | 'PERSISTENT_RECURSIVE';

/** Which watches `removeWatches` and `checkWatches` mean (ZooKeeper's WatcherType). */
export type WatcherKind = 'children' | 'data' | 'any' | 'persistent' | 'persistentRecursive';

/** One operation of a transaction (`multi`). */
export type Op =
  | { readonly type: 'create'; readonly path: string; readonly data: Buffer; readonly mode: CreateMode; readonly acl: readonly ACL[]; readonly ttlMs?: number }
  | { readonly type: 'delete'; readonly path: string; readonly version: number }
  | { readonly type: 'setData'; readonly path: string; readonly data: Buffer; readonly version: number }
  | { readonly type: 'check'; readonly path: string; readonly version: number };

/**
 * The result of one operation of a transaction. When the transaction fails, every operation has
 * an 'error' result: the one that failed has its own code; the others have 'OK' (rolled back,
 * before it) or 'RUNTIMEINCONSISTENCY' (not run, after it), as the server reports them.
 */
export type OpResult =
  | { readonly type: 'create'; readonly path: string; readonly stat?: Stat }
  | { readonly type: 'delete' }
  | { readonly type: 'setData'; readonly stat: Stat }
  | { readonly type: 'check' }
  | { readonly type: 'error'; readonly code: string; readonly rc: number };

/** One read of `multiRead`. */
export type ReadOp = { readonly type: 'getData'; readonly path: string } | { readonly type: 'getChildren'; readonly path: string };

/** The result of one read of `multiRead`: each read succeeds or fails on its own. */
export type ReadResult =
  | { readonly type: 'getData'; readonly data: Buffer; readonly stat: Stat }
  | { readonly type: 'getChildren'; readonly children: string[] }
  | { readonly type: 'error'; readonly code: string; readonly rc: number };

/** Who the server thinks we are (whoAmI): one entry per authentication. */
export interface ClientIdentity {
  readonly scheme: string;
  readonly id: string;
}

/** Why a handle closed. */
export type CloseReason = 'closed' | 'expired' | 'authFailed';

export interface TransportEvents {
  /** The handle has a live connection to a server (first connect or reconnect with the same session). */
  connected(): void;
  /**
   * The connection dropped (or a connect attempt failed); the transport is trying the servers again
   * with the same session. `cause` says why when known (refused, host not found, timed out, ...).
   */
  connecting(cause?: Error): void;
  /** The handle is closed for good: by us, by session expiry, or by an authentication failure. */
  closed(reason: CloseReason): void;
}

export interface Transport {
  /** Session id, once connected; 0n before. */
  readonly sessionId: bigint;
  /** Session password as hex, once connected. */
  readonly sessionPassword: string;
  /** Session timeout the server granted, once connected. */
  readonly negotiatedSessionTimeoutMs: number;
  readonly isClosed: boolean;
  /**
   * `performance.now()` of the last time the server was heard from (a reply, a ping answer, a
   * notification, a handshake); 0 before that. The server expires a session one session timeout
   * after it last heard from the client, so the client counts LOST from here. A transport that
   * cannot see every reply (the native one: the C client answers pings itself) gives a lower
   * bound, which only makes LOST come earlier.
   */
  readonly lastHeardAt: number;
  /** Why the last connection attempt failed, when one did since the last connection; for error messages. */
  readonly lastConnectError: Error | undefined;
  /**
   * Whether a create (and a create in `multi`) gives the new node the `acl` it was passed, in the
   * create request itself. False for the native binding, which creates every node with the open
   * ACL whatever it is passed: there a caller that wants another ACL sets it after the create, and
   * the node is open until then.
   */
  readonly aclOnCreate: boolean;

  on<E extends keyof TransportEvents>(event: E, listener: TransportEvents[E]): void;
  off<E extends keyof TransportEvents>(event: E, listener: TransportEvents[E]): void;

  /**
   * Closes the handle. With a live connection this ends the session (the server deletes its
   * ephemeral nodes); the promise resolves when the server has answered or a short bound has
   * passed. Never blocks the event loop; never rejects.
   */
  close(): Promise<void>;

  /** Creates a node with `acl` (see `aclOnCreate`); resolves with its path (with the sequence, for a sequential node). */
  create(path: string, data: Buffer, mode: CreateMode, acl: readonly ACL[], ttlMs?: number): Promise<string>;
  delete(path: string, version: number): Promise<void>;
  exists(path: string, watcher?: Watcher): Promise<Stat | null>;
  getData(path: string, watcher?: Watcher): Promise<{ data: Buffer; stat: Stat }>;
  setData(path: string, data: Buffer, version: number): Promise<Stat>;
  getChildren(path: string, watcher?: Watcher): Promise<{ children: string[]; stat: Stat }>;
  sync(path: string): Promise<void>;
  getACL(path: string): Promise<{ acl: ACL[]; stat: Stat }>;
  setACL(path: string, acl: readonly ACL[], version: number): Promise<void>;
  addAuth(scheme: string, auth: string): Promise<void>;

  // ---- optional: the protocol transport has them, the native one does not.

  /**
   * Runs `send`, whose requests (made on this transport, synchronously) leave in one write when it
   * returns: a create and the listing pipelined behind it. Optional: a transport without it sends
   * each as it comes, and the caller runs `send` itself.
   */
  batch?<T>(send: () => T): T;
  /** A create that also returns the new node's stat (create2). */
  create2?(path: string, data: Buffer, mode: CreateMode, acl: readonly ACL[], ttlMs?: number): Promise<{ path: string; stat: Stat }>;
  /** Runs the operations atomically. Resolves with a result per operation, 'error' entries included when it failed. */
  multi?(ops: readonly Op[]): Promise<OpResult[]>;
  /** Several reads in one request; each succeeds or fails on its own (not atomic). */
  multiRead?(ops: readonly ReadOp[]): Promise<ReadResult[]>;
  /** A persistent watch, which does not end when it fires; ended by removeWatches or the session's end. */
  addWatch?(path: string, mode: AddWatchMode, watcher: Watcher): Promise<void>;
  /**
   * Removes watches on `path`: `watcher`'s alone, or every watcher of `kind` when none is given.
   * With `local`, removes them on the client even when the server cannot be reached.
   */
  removeWatches?(path: string, kind: WatcherKind, watcher?: Watcher, local?: boolean): Promise<void>;
  /** Rejects with NOWATCHER unless a watch of `kind` (of `watcher`, if given) is set on `path`. */
  checkWatches?(path: string, kind: WatcherKind, watcher?: Watcher): Promise<void>;
  /** The paths of this session's ephemeral nodes under `prefixPath` ('/' for all). */
  getEphemerals?(prefixPath: string): Promise<string[]>;
  /** How many nodes there are under `path`, all levels. */
  getAllChildrenNumber?(path: string): Promise<number>;
  /** Who the server thinks this session is. */
  whoAmI?(): Promise<ClientIdentity[]>;
  /** The ensemble's configuration, {@link CONFIG_NODE} whatever the chroot, as the Java client's getConfig. */
  getConfig?(watcher?: Watcher): Promise<{ data: Buffer; stat: Stat }>;
  /**
   * Moves the session to these servers ("host:port,…"; the chroot stays): every later connection
   * attempt goes to one of them. A connection to a server no longer listed is dropped, and the
   * session goes on at one that is (the Java client's updateServerList).
   */
  updateServers?(hosts: string): void;
}

/** Where a ZooKeeper ensemble keeps its configuration (its members), outside every chroot. */
export const CONFIG_NODE = '/zookeeper/config';

/** A connect string's servers ("host:port,…") and its chroot (from the first '/'; '' when none). */
export function splitConnectString(connectString: string): { servers: string; chroot: string } {
  const slash = connectString.indexOf('/');
  return slash < 0 ? { servers: connectString, chroot: '' } : { servers: connectString.slice(0, slash), chroot: connectString.slice(slash) };
}

/** The operations a transport may lack. */
export type OptionalOperation =
  | 'create2'
  | 'multi'
  | 'multiRead'
  | 'addWatch'
  | 'removeWatches'
  | 'checkWatches'
  | 'getEphemerals'
  | 'getAllChildrenNumber'
  | 'whoAmI';

/** Builds a transport for a session attempt. */
export type TransportFactory = (options: TransportOptions) => Transport;
