/**
 * The small camelCase interface the rest of zk-recipes uses to talk to ZooKeeper. One Transport is
 * one native handle: one session attempt. `NativeTransport` is the only implementation that talks
 * to the `zookeeper` binding; tests may provide a fake.
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

/** Permission bits for ACL entries. */
export const Perms = Object.freeze({
  READ: 1,
  WRITE: 2,
  CREATE: 4,
  DELETE: 8,
  ADMIN: 16,
  ALL: 31,
});

/** What a one-shot watch reports. 'sessionLost' is synthesised by the client when the session ends, since the native client drops watches silently then. */
export type WatchEventType = 'created' | 'deleted' | 'changed' | 'child' | 'notWatching' | 'sessionLost';

export interface WatchEvent {
  readonly type: WatchEventType;
  /** Full path on the server (the client strips its namespace before handing events to users). */
  readonly path: string;
}

export type Watcher = (event: WatchEvent) => void;

export interface TransportOptions {
  readonly connectString: string;
  readonly sessionTimeoutMs: number;
  /** Resume this session instead of starting a new one. Both or neither. */
  readonly sessionId?: bigint;
  readonly sessionPassword?: string;
}

/** Why a handle closed. */
export type CloseReason = 'closed' | 'expired' | 'authFailed';

export interface TransportEvents {
  /** The handle has a live connection to a server (first connect or reconnect with the same session). */
  connected(): void;
  /** The connection dropped; the native client is trying the servers again with the same session. */
  connecting(): void;
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

  on<E extends keyof TransportEvents>(event: E, listener: TransportEvents[E]): void;
  off<E extends keyof TransportEvents>(event: E, listener: TransportEvents[E]): void;

  /** Closes the handle. With a live connection this ends the session, and the server deletes its ephemeral nodes. */
  close(): void;

  create(path: string, data: Buffer, mode: CreateMode, ttlMs?: number): Promise<string>;
  delete(path: string, version: number): Promise<void>;
  exists(path: string, watcher?: Watcher): Promise<Stat | null>;
  getData(path: string, watcher?: Watcher): Promise<{ data: Buffer; stat: Stat }>;
  setData(path: string, data: Buffer, version: number): Promise<Stat>;
  getChildren(path: string, watcher?: Watcher): Promise<{ children: string[]; stat: Stat }>;
  sync(path: string): Promise<void>;
  getACL(path: string): Promise<{ acl: ACL[]; stat: Stat }>;
  setACL(path: string, acl: readonly ACL[], version: number): Promise<void>;
  addAuth(scheme: string, auth: string): Promise<void>;
}

/** Builds a transport for a session attempt. */
export type TransportFactory = (options: TransportOptions) => Transport;
