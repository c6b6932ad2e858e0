import { hostname } from 'node:os';
import { InvalidArgumentError, UnsupportedError } from '../errors';
import { validateNamespace } from '../paths';
import { ExponentialBackoffRetry } from '../retry';
import type { RetryPolicy } from '../retry';
import { TRANSPORT_NAMES, transportFactory, type TransportName } from './chooseTransport';
import type { ACL, TransportFactory } from '../transport/Transport';
import { secretAuth, secretTls } from '../util/redact';
import { describeValue, validateBoolean, validateFunction, validatePositiveInt, validateString, validateTimeout } from '../validate';
import { DEFAULT_MAX_REQUEST_BYTES } from './requestSize';
import type { ConnectionStateErrorPolicy } from './ConnectionState';
import { DEFAULT_COMPRESSION_PROVIDER, validateCompressionProvider, type CompressionProvider } from './compression';

/**
 * Chooses the ACL of every node the client creates, like Curator's ACLProvider: nodes created by
 * `create`, their parents (`createParents`), every level of `ensurePath`, the namespace node, the
 * recipes' nodes and base paths, and the creates of a transaction.
 */
export interface AclProvider {
  /** The ACL of a node for which `getAclForPath` gives none. */
  getDefaultAcl(): readonly ACL[];
  /**
   * The ACL of the node about to be created at `path`: its full path, namespace included (and a
   * protected node's `_c_` prefix; a sequential node's path before its sequence number). Null or
   * undefined: `getDefaultAcl()`.
   */
  getAclForPath(path: string): readonly ACL[] | null | undefined;
}

/** Digest (or other scheme) credentials sent on every new session. */
export interface AuthInfo {
  readonly scheme: string;
  readonly auth: string;
}

/** Options of a ZkClient. Every field but `connectString` has a default in `DEFAULT_CLIENT_OPTIONS`. */
export interface ZkClientOptions {
  /** "host:port,host:port[/chroot]". */
  connectString: string;
  /** Session timeout asked of the server (it may grant another, within its bounds). */
  sessionTimeoutMs?: number;
  /** How long an operation waits for a connection before it counts as a CONNECTIONLOSS. */
  connectionTimeoutMs?: number;
  /** How operations retry CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONMOVED and SESSIONEXPIRED. */
  retryPolicy?: RetryPolicy;
  /** Every path is relative to this node ('app' or 'app/sub'), created on first use. */
  namespace?: string;
  /** Which states recipes treat as errors: 'standard' (SUSPENDED and LOST) or 'session' (LOST only). */
  connectionStateErrorPolicy?: ConnectionStateErrorPolicy;
  /** Credentials added to every session, such as `{ scheme: 'digest', auth: 'user:password' }`. */
  authInfo?: readonly AuthInfo[];
  /**
   * ACLs for every node the client creates, parents and namespace included. On the protocol
   * transport each create request carries the node's ACL: no node is ever open. The native binding
   * always creates nodes with the open ACL, so there the client sets the provider's ACL right after
   * the create: the node is open for that moment (and a parent stays open if the connection drops
   * in between). An ephemeral node's ACL is set in the node's session only: if that session ends
   * first, the node is gone with it and the create rejects with SessionLostError.
   */
  aclProvider?: AclProvider;
  /** Ask for read-only mode. Not supported (neither transport implements it), so `true` is refused with UnsupportedError. */
  canBeReadOnly?: boolean;
  /**
   * Who this client is, for people reading the nodes it makes: unless `defaultData` is given, it is
   * the data of every node created without data, lock nodes among them, so a lock's node says who
   * holds it. Default `<hostname>:<pid>`.
   */
  id?: string;
  /**
   * Data written by `create` when none is given; default `id` as UTF-8. Curator writes the local IP
   * address, which does not tell two processes of one host apart. With the default `id`, every
   * client of the process shares one Buffer, as Curator's clients share theirs: never write into it.
   */
  defaultData?: Buffer;
  /**
   * The largest request the servers accept, in bytes: their jute.maxbuffer (ZooKeeper's default,
   * 1 MiB less one byte, unless they are configured otherwise). Every request is checked against it
   * before it is sent: a server drops the connection of a client that sends a larger one.
   */
  maxRequestBytes?: number;
  /**
   * How the client speaks to ZooKeeper: 'protocol' (the default), ZooKeeper's protocol in
   * TypeScript, which needs no compiler; or 'native', the ZooKeeper C client through the optional
   * `zookeeper` package, an optional peer dependency installed with `npm install zookeeper`
   * (it compiles C on install).
   */
  transport?: TransportName;
  /**
   * TLS for the connection (node:tls connect options: `ca`, `cert`, `key`, `servername`, …), to a
   * server's secureClientPort. The protocol transport only. The client keeps a frozen copy, whose
   * `key`, `passphrase`, `pfx` and `session` show as redacted to `util.inspect`.
   */
  tls?: import('node:tls').ConnectionOptions;
  /**
   * The largest frame accepted from the server, in bytes: the client's jute.maxbuffer (default
   * 0xfffff, as the Java client). A larger reply drops the connection. The protocol transport only.
   */
  maxFrameBytes?: number;
  /**
   * How node data is compressed, as Curator's `compressionProvider`: by default a
   * GzipCompressionProvider, whose data Curator's own GzipCompressionProvider (its default) reads
   * and writes. Used by the operations given `compressed: true`, and by all of them with
   * `enableCompression`.
   */
  compression?: CompressionProvider;
  /**
   * Compress the data of every create, setData and transaction create or setData, and decompress
   * the data of every getData, unless the operation says `compressed: false`. Default false: only
   * the operations given `compressed: true` are. Curator 5.4 has no such switch (its builder's
   * `enableCompression()` came with 5.8), so a Curator 5.4 reader must ask for each read with
   * `.decompressed()`. Every reader of these nodes must decompress, the recipes on other clients
   * too: turn it on for a whole fleet at once, on new paths.
   */
  enableCompression?: boolean;
  /**
   * Follow the ensemble's membership, as Curator's EnsembleTracker (on by default there too): at
   * every connection and on every change, the client reads the ensemble's configuration
   * (`/zookeeper/config`, kept current by dynamic reconfiguration) and moves to the members it
   * lists, the chroot kept, for this session and every later one (see `currentConnectString`). A
   * connection to a server no longer listed is dropped, and the session goes on at one that is.
   * An ensemble without dynamic reconfiguration, or a standalone server, lists none: nothing
   * changes. Turn it off when clients must reach the servers by the addresses given here only
   * (through a proxy, or a NAT), which the configuration does not know.
   */
  ensembleTracker?: boolean;
  /**
   * Builds the transport, instead of `transport`. Tests may pass a fake.
   *
   * @internal A test seam: not in the published declarations.
   */
  transportFactory?: TransportFactory;
}

const HOLDER_ID = `${hostname()}:${process.pid}`;

/** The defaults, frozen. */
export const DEFAULT_CLIENT_OPTIONS = Object.freeze({
  sessionTimeoutMs: 60_000,
  connectionTimeoutMs: 15_000,
  retryPolicy: new ExponentialBackoffRetry({ baseSleepMs: 1_000, maxRetries: 3 }) as RetryPolicy,
  namespace: undefined as string | undefined,
  connectionStateErrorPolicy: 'standard' as ConnectionStateErrorPolicy,
  authInfo: Object.freeze([]) as readonly AuthInfo[],
  aclProvider: undefined as AclProvider | undefined,
  canBeReadOnly: false,
  id: HOLDER_ID,
  defaultData: Buffer.from(HOLDER_ID, 'utf8'),
  maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
  transport: 'protocol' as TransportName,
  compression: DEFAULT_COMPRESSION_PROVIDER,
  enableCompression: false,
  ensembleTracker: true,
});

export type ResolvedClientOptions = Readonly<Required<Omit<ZkClientOptions, 'namespace' | 'aclProvider' | 'tls' | 'maxFrameBytes'>>> & {
  readonly namespace: string | undefined;
  readonly aclProvider: AclProvider | undefined;
  readonly tls: import('node:tls').ConnectionOptions | undefined;
  readonly maxFrameBytes: number | undefined;
};

/**
 * Checks every option and fills in the defaults. Throws InvalidArgumentError before any I/O. The
 * result shows no secret to `util.inspect`: `authInfo` (frozen copies) shows its schemes only, and
 * `tls` (a frozen copy) its key, passphrase, pfx and session as redacted.
 */
export function resolveClientOptions(options: ZkClientOptions): ResolvedClientOptions {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('ZkClient options must be an object');
  const connectString = validateString(options.connectString, 'connectString', { allowEmpty: false });
  if (!/^[^,/\s]+:\d+(,[^,/\s]+:\d+)*(\/.*)?$/.test(connectString)) {
    throw new InvalidArgumentError(`connectString must be "host:port[,host:port…][/chroot]", got "${connectString}"`);
  }
  const sessionTimeoutMs: unknown = options.sessionTimeoutMs ?? DEFAULT_CLIENT_OPTIONS.sessionTimeoutMs;
  // The server needs a session timeout (a 32-bit count of milliseconds); 0 is not "none".
  if (typeof sessionTimeoutMs !== 'number' || !(sessionTimeoutMs >= 1 && sessionTimeoutMs <= 0x7fffffff)) {
    throw new InvalidArgumentError(`sessionTimeoutMs must be a positive number of milliseconds (at most ${0x7fffffff}), got ${describeValue(sessionTimeoutMs)}`);
  }
  const connectionTimeoutMs = validateTimeout(options.connectionTimeoutMs, 'connectionTimeoutMs') ?? DEFAULT_CLIENT_OPTIONS.connectionTimeoutMs;
  const retryPolicy = options.retryPolicy ?? DEFAULT_CLIENT_OPTIONS.retryPolicy;
  if (typeof retryPolicy !== 'object' || retryPolicy === null || typeof retryPolicy.allowRetry !== 'function') {
    throw new InvalidArgumentError('retryPolicy must have an allowRetry(retryCount, elapsedMs, error) method');
  }
  const policy = options.connectionStateErrorPolicy ?? DEFAULT_CLIENT_OPTIONS.connectionStateErrorPolicy;
  if (policy !== 'standard' && policy !== 'session') {
    throw new InvalidArgumentError(`connectionStateErrorPolicy must be 'standard' or 'session', got ${String(policy)}`);
  }
  const authInfo = options.authInfo ?? DEFAULT_CLIENT_OPTIONS.authInfo;
  if (!Array.isArray(authInfo)) throw new InvalidArgumentError('authInfo must be an array of { scheme, auth }');
  for (const a of authInfo) {
    validateString(a?.scheme, 'authInfo.scheme', { allowEmpty: false });
    validateString(a?.auth, 'authInfo.auth', { allowEmpty: true });
  }
  if (options.aclProvider !== undefined) {
    validateFunction(options.aclProvider?.getAclForPath, 'aclProvider.getAclForPath');
    validateFunction(options.aclProvider?.getDefaultAcl, 'aclProvider.getDefaultAcl');
  }
  const canBeReadOnly = options.canBeReadOnly === undefined ? false : validateBoolean(options.canBeReadOnly, 'canBeReadOnly');
  if (canBeReadOnly) {
    throw new UnsupportedError('canBeReadOnly is not supported: neither transport implements read-only mode');
  }
  const id = options.id === undefined ? DEFAULT_CLIENT_OPTIONS.id : validateString(options.id, 'id', { allowEmpty: false });
  if (options.defaultData !== undefined && !Buffer.isBuffer(options.defaultData)) {
    throw new InvalidArgumentError('defaultData must be a Buffer');
  }
  const transport = options.transport ?? DEFAULT_CLIENT_OPTIONS.transport;
  if (!TRANSPORT_NAMES.includes(transport)) {
    throw new InvalidArgumentError(`transport must be one of ${TRANSPORT_NAMES.map((n) => `'${n}'`).join(', ')}, got ${describeValue(transport)}`);
  }
  if (options.transportFactory !== undefined) validateFunction(options.transportFactory, 'transportFactory');
  if (options.tls !== undefined && (options.tls === null || typeof options.tls !== 'object')) {
    throw new InvalidArgumentError(`tls must be an object of node:tls connect options, got ${describeValue(options.tls)}`);
  }
  const maxFrameBytes = options.maxFrameBytes === undefined ? undefined : validatePositiveInt(options.maxFrameBytes, 'maxFrameBytes', { min: 1024, max: 0x7fffffff });
  if (transport === 'native' && options.transportFactory === undefined && (options.tls !== undefined || maxFrameBytes !== undefined)) {
    throw new UnsupportedError("tls and maxFrameBytes need transport 'protocol': the native binding has neither");
  }
  const maxRequestBytes =
    options.maxRequestBytes === undefined ? DEFAULT_CLIENT_OPTIONS.maxRequestBytes : validatePositiveInt(options.maxRequestBytes, 'maxRequestBytes', { min: 1024 });
  const compression = options.compression === undefined ? DEFAULT_CLIENT_OPTIONS.compression : validateCompressionProvider(options.compression);
  const enableCompression = options.enableCompression === undefined ? false : validateBoolean(options.enableCompression, 'enableCompression');
  const ensembleTracker = options.ensembleTracker === undefined ? true : validateBoolean(options.ensembleTracker, 'ensembleTracker');
  return Object.freeze({
    connectString,
    sessionTimeoutMs,
    connectionTimeoutMs,
    retryPolicy,
    namespace: validateNamespace(options.namespace),
    connectionStateErrorPolicy: policy,
    // The defaults' own frozen values where nothing was given: one each per process, not per client.
    authInfo: authInfo.length === 0 ? DEFAULT_CLIENT_OPTIONS.authInfo : Object.freeze(authInfo.map(secretAuth)),
    aclProvider: options.aclProvider,
    canBeReadOnly,
    id,
    defaultData: options.defaultData ?? (id === DEFAULT_CLIENT_OPTIONS.id ? DEFAULT_CLIENT_OPTIONS.defaultData : Buffer.from(id, 'utf8')),
    maxRequestBytes,
    transport,
    tls: options.tls === undefined ? undefined : secretTls(options.tls),
    maxFrameBytes,
    compression,
    enableCompression,
    ensembleTracker,
    // Chosen now, so that a native transport whose binding is not built fails here, before any I/O.
    transportFactory: options.transportFactory ?? transportFactory(transport),
  });
}
