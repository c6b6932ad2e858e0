/**
 * One session of ZooKeeper's client protocol, over one connection at a time: connecting to the
 * servers in turn, the handshake, pings and the read timeout, requests pipelined and their replies
 * matched, credentials and watches set again on every connection, notifications, and the close.
 * The Transport operations on top of it are ProtocolTransport.ts; the socket is ProtocolSocket.ts.
 *
 * Where the contract of `Transport` is silent, this does what the Java client does (ClientCnxn,
 * ClientCnxnSocketNIO, ZKWatchManager, StaticHostProvider); each such place says so.
 */
import { inspect, type InspectOptions, types } from 'node:util';
import debug from 'debug';
import { InvalidArgumentError } from '../errors';
import { SERVER_ERROR_CODES } from '../errors/codes';
import { validatePath } from '../paths';
import { addListener, listenersOf, removeListener, type ListenerSlots } from '../util/listenerSlots';
import { showAs } from '../util/redact';
import { CONFIG_NODE, type CloseReason, type TransportEvents, type TransportOptions, type WatchEvent, type WatchEventType, type Watcher } from '../transport/Transport';
import { readReplyHeader, readWatcherEvent } from './codec';
import { DEFAULT_MAX_FRAME_BYTES, LENGTH_BYTES } from './framing';
import { Chroot, HostList, formatHost, parseConnectString, type HostAddress } from './hosts';
import { JuteReader, JuteWriter } from './jute';
import { ErrorCode, EventType, MAX_XID, OpCode, Xid } from './opcodes';
import { ProtocolError } from './ProtocolError';
import { ProtocolSocket, type SocketHandler } from './ProtocolSocket';
import {
  AuthPacketRecord,
  ConnectRequestRecord,
  ConnectResponseRecord,
  SetWatches2Record,
  SetWatchesRecord,
  type ConnectResponse,
} from './records';
import { Failure, frame, type Request } from './requests';
import { WatcherTables, watchBatches } from './watches';

const log = debug('zk-recipes:protocol');

/** The Java client pings at least this often, however long the session timeout. */
const MAX_PING_INTERVAL_MS = 10_000;

/** The longest wait between connection attempts (the Java client's spin delay and its reconnect jitter). */
const MAX_RECONNECT_DELAY_MS = 1_000;

/** How long `close()` waits at most for the server to confirm the end of the session. */
const MAX_CLOSE_WAIT_MS = 1_000;

/** The state of every node event a server sends (KeeperState.SyncConnected). */
const SYNC_CONNECTED = 3;

/** Every KeeperState the Java client knows (KeeperState.fromInt throws on any other, and the connection drops). */
const KEEPER_STATES: ReadonlySet<number> = new Set([-1, 0, 1, 3, 4, 5, 6, -112, 7]);

const EVENT_TYPES: Readonly<Record<number, WatchEventType>> = Object.freeze({
  [EventType.nodeCreated]: 'created',
  [EventType.nodeDeleted]: 'deleted',
  [EventType.nodeDataChanged]: 'changed',
  [EventType.nodeChildrenChanged]: 'child',
});

type Phase = 'waiting' | 'connecting' | 'handshake' | 'connected' | 'closed';

interface Auth {
  readonly scheme: string;
  readonly auth: Buffer;
  /** Callers of addAuth waiting for the server to accept it. */
  waiters: Array<{ resolve: () => void; reject: (failure: Failure) => void }>;
}

/** A new session's password: 16 zero bytes, as the Java client's. */
const NO_PASSWORD = '0'.repeat(32);

/** The password as kept: 32 lower-case hex digits, which cost a session less than a Buffer and pin no pool. */
function validatePassword(password: unknown): string {
  if (typeof password !== 'string' || !/^[0-9a-fA-F]{32}$/.test(password)) {
    throw new InvalidArgumentError('a session password is 16 bytes as 32 hex digits');
  }
  return password.toLowerCase();
}

/**
 * The session under a ProtocolTransport (whose TSDoc states the guarantees). Requests fail with a
 * Failure, which the transport turns into a ZkError in the caller's own async frame.
 */
export class ProtocolConnection implements SocketHandler {
  /** The transport's listeners ('connected', 'connecting', 'closed'): one client's, most of the time. */
  private readonly listeners: ListenerSlots<TransportEvents> = {};
  private readonly hosts: HostList;
  /** The connect string's chroot, which the server's paths carry and the caller's do not. */
  readonly chroot: Chroot;
  /** The watchers of the session, by server path. */
  readonly registry = new WatcherTables();
  private readonly maxFrameBytes: number;

  private phase: Phase = 'waiting';
  private closeReason: CloseReason | undefined;
  private closing: Promise<void> | undefined;
  private socket: ProtocolSocket | undefined;
  private host: HostAddress | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Whether a connection has been made yet: the Java client waits a random moment before every later attempt. */
  private everConnected = false;

  /** The session's id, password (hex) and granted timeout (0 until a server grants one). */
  private session: { id: bigint; password: string; timeoutMs: number };
  private lastZxid = 0n;
  private xid = 0;
  private connectTimeoutMs: number;
  private readTimeoutMs = 0;
  private attemptStartedAt = 0;
  private lastSendAt = 0;
  private lastRecvAt = 0;

  /** Requests waiting for a connection; made with the first, dropped once sent. */
  private outbox: Request[] | undefined;
  /**
   * Requests sent, in order, waiting for their replies; made with the first, dropped once all are
   * answered, so that an idle session keeps no array grown for a pipeline it no longer has.
   */
  private pending: Request[] | undefined;
  /** Credentials, sent again on every connection of the session; made with the first (most sessions have none). */
  private auths: Auth[] | undefined;
  /** Credentials sent on this connection, in order, waiting for their replies (xid -4); made with the first. */
  private authReplies: Auth[] | undefined;

  lastHeardAt = 0;
  lastConnectError: Error | undefined = undefined;

  constructor(private readonly options: TransportOptions) {
    const { hosts, chroot } = parseConnectString(options.connectString);
    this.hosts = new HostList(hosts);
    this.chroot = new Chroot(chroot);
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    if (!Number.isInteger(this.maxFrameBytes) || this.maxFrameBytes < 16) {
      throw new InvalidArgumentError(`maxFrameBytes must be an integer of at least 16, got ${String(options.maxFrameBytes)}`);
    }
    if ((options.sessionId === undefined) !== (options.sessionPassword === undefined)) {
      throw new InvalidArgumentError('sessionId and sessionPassword go together');
    }
    this.session = {
      id: options.sessionId ?? 0n,
      password: options.sessionId === undefined ? NO_PASSWORD : validatePassword(options.sessionPassword),
      timeoutMs: 0,
    };
    // Until the server grants a timeout, the asked one.
    this.connectTimeoutMs = this.attemptTimeout(options.sessionTimeoutMs);
    if (log.enabled) log('new transport for %s (servers in order %s)', options.connectString, this.hosts.order.map(formatHost).join(','));
    this.nextAttempt();
  }

  // ---------------------------------------------------------------- the contract's state

  get sessionId(): bigint {
    return this.phase === 'closed' ? 0n : this.session.timeoutMs > 0 ? this.session.id : 0n;
  }

  get sessionPassword(): string {
    return this.session.password;
  }

  /** What `util.inspect` shows: where and in which session, not the credentials, the TLS key or the session password. */
  [inspect.custom](_depth: number, options: InspectOptions, show: typeof inspect = inspect): string {
    const session = this.session.id === 0n ? null : `0x${this.session.id.toString(16)}`;
    return showAs('ProtocolConnection', { connectString: this.options.connectString, tls: this.options.tls !== undefined, phase: this.phase, session }, options, show);
  }

  get negotiatedSessionTimeoutMs(): number {
    return this.session.timeoutMs;
  }

  get isClosed(): boolean {
    return this.phase === 'closed' || this.closing !== undefined;
  }

  /** Whether the session is established on a connection now. */
  get isConnected(): boolean {
    return this.phase === 'connected';
  }

  on<E extends keyof TransportEvents>(event: E, listener: TransportEvents[E]): void {
    addListener(this.listeners, event, listener);
  }

  off<E extends keyof TransportEvents>(event: E, listener: TransportEvents[E]): void {
    removeListener(this.listeners, event, listener);
  }

  /** Tells the listeners; one that throws is logged, and neither the others nor the connection suffer. */
  private emit<E extends keyof TransportEvents>(event: E, ...args: Parameters<TransportEvents[E]>): void {
    for (const listener of listenersOf(this.listeners, event) as ReadonlyArray<(...a: Parameters<TransportEvents[E]>) => void>) {
      try {
        listener(...args);
      } catch (err) {
        log('session %s: a %s listener threw: %O', this.idHex, event, err);
      }
    }
  }

  private get idHex(): string {
    return `0x${this.session.id.toString(16)}`;
  }

  // ---------------------------------------------------------------- connecting

  /**
   * Picks the next server and connects to it, after a wait where the Java client waits: a random
   * moment before every attempt but the first (so that clients of a restarted server do not all
   * come back at once), and a spin delay once every server has been tried since the connection
   * dropped (see HostList). The Java client waits up to a second for each; here each is also at
   * most a tenth of the session timeout, so that a short session is not lost to the waits alone,
   * and at most a fifth of the time left before the server may expire the session, counted from
   * when it was last heard from: after a read timeout only a third of the timeout is left, and the
   * client gives the session up before that ends (see the client's Connection), so a few attempts
   * must fit in it, not one wait of up to two seconds.
   */
  private nextAttempt(): void {
    if (this.phase === 'closed' || this.closing) return;
    const { host, cycled } = this.hosts.next();
    const timeoutMs = this.session.timeoutMs || this.options.sessionTimeoutMs;
    const maxDelayMs = Math.min(MAX_RECONNECT_DELAY_MS, timeoutMs / 10);
    const waitMs = (cycled ? maxDelayMs : 0) + (this.everConnected ? Math.random() * maxDelayMs : 0);
    // Past that time, the usual waits: the session is the client's to give up, and a server that
    // stays down is not to be tried in a tight loop.
    const leftMs = this.everConnected && this.lastHeardAt > 0 ? this.lastHeardAt + timeoutMs - performance.now() : 0;
    const delayMs = leftMs > 0 ? Math.min(waitMs, leftMs / 5) : waitMs;
    this.phase = 'waiting';
    this.host = host;
    if (delayMs < 1) {
      this.open(host);
      return;
    }
    log('session %s: next attempt %s in %d ms', this.idHex, formatHost(host), Math.round(delayMs));
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(host), delayMs);
  }

  private open(host: HostAddress): void {
    if (this.phase === 'closed' || this.closing) return;
    this.phase = 'connecting';
    this.attemptStartedAt = performance.now();
    this.lastSendAt = this.attemptStartedAt;
    log('session %s: connecting to %s%s', this.idHex, formatHost(host), this.options.tls ? ' (TLS)' : '');
    // The connection is its socket's handler: no object and closures of their own for each session.
    this.socket = new ProtocolSocket(host, this.options.tls, this.maxFrameBytes, this);
    this.arm(this.connectTimeoutMs);
  }

  // ---------------------------------------------------------------- what the socket tells (SocketHandler)

  /** @internal */
  opened(): void {
    this.onSocketOpen();
  }

  /** @internal */
  received(): void {
    this.lastRecvAt = performance.now();
  }

  /** @internal */
  frame(body: Buffer): boolean {
    return this.onFrame(body);
  }

  /** @internal */
  established(): boolean {
    return this.phase === 'connected';
  }

  /** @internal */
  failed(cause: unknown): void {
    this.drop(cause);
  }

  /**
   * Moves the session to a new list of servers (an ensemble that was reconfigured); the chroot
   * stays. A connection to a server still listed (by the name it was reached by, or its address)
   * stays up; one to a server no longer listed is dropped, and the next attempt takes a server of
   * the new list: the session carries on, as after any lost connection.
   */
  updateHosts(hosts: readonly HostAddress[]): void {
    this.hosts.replace(hosts);
    const host = this.host;
    log('session %s: servers now %s', this.idHex, this.hosts.order.map(formatHost).join(','));
    if (this.phase !== 'connected' || host === undefined) return;
    if (!this.hosts.has(host.port, [host.host, this.socket?.remoteAddress])) this.drop(new Error(`${formatHost(host)} is no longer a server of the ensemble`));
  }

  /** The socket is up: ask for the session (ClientCnxn.primeConnection, whose rest waits for the answer). */
  private onSocketOpen(): void {
    this.phase = 'handshake';
    this.everConnected = true;
    const request = new JuteWriter(LENGTH_BYTES, 64);
    ConnectRequestRecord.write(request, {
      protocolVersion: 0,
      lastZxidSeen: this.lastZxid,
      timeOut: this.options.sessionTimeoutMs,
      sessionId: this.session.id,
      passwd: Buffer.from(this.session.password, 'hex'),
      readOnly: false,
    });
    const bytes = request.bytes();
    bytes.writeInt32BE(bytes.length - LENGTH_BYTES, 0);
    this.write(bytes);
  }

  /**
   * Handles one frame; true when it answered a request. A frame is handled only when its
   * structure holds: a reply answers the request next in line, an error code is one ZooKeeper has,
   * a notification names a known event type and state and a valid path, and every byte of a
   * record is used. Otherwise it throws, and the connection drops: ZooKeeper frames carry no
   * checksum, so bytes that break the structure are the only sign of a stream gone wrong, and what
   * follows them cannot be trusted either. (A byte changed into another valid value cannot be told
   * from the server's own.)
   */
  private onFrame(body: Buffer): boolean {
    const at = performance.now();
    this.lastHeardAt = at;
    // The read timeout counts whole frames, as the Java client's: bytes of a frame that never
    // completes (a length prefix gone wrong) must not keep a dead connection alive.
    this.lastRecvAt = at;
    const r = new JuteReader(body);
    if (this.phase === 'handshake') {
      this.onHandshake(ConnectResponseRecord.read(r));
      return false;
    }
    const header = readReplyHeader(r);
    if (header.err !== 0 && !(header.err in SERVER_ERROR_CODES)) {
      // The requests waiting fail with CONNECTIONLOSS when the connection drops, this one too.
      throw new ProtocolError('malformed', `a reply with xid ${header.xid} carries error code ${header.err}, which ZooKeeper does not have`);
    }
    switch (header.xid) {
      case Xid.notification: {
        if (header.err !== 0) throw new ProtocolError('malformed', `a notification carries error code ${header.err}`);
        const event = readWatcherEvent(r);
        if (r.remaining !== 0) throw new ProtocolError('malformed', `a notification has ${r.remaining} bytes after its event`);
        this.onNotification(event, header.zxid);
        return false;
      }
      case Xid.ping:
        return false;
      case Xid.auth:
        this.onAuthReply(header.err);
        return true;
    }
    const request = this.pending?.shift();
    if (request === undefined) throw new ProtocolError('unexpectedReply', `a reply with xid ${header.xid} came while no request waited`);
    if (this.pending?.length === 0) this.pending = undefined;
    if (request.xid !== header.xid) {
      const err = new ProtocolError('unexpectedReply', `a reply with xid ${header.xid} came where xid ${request.xid} was next`);
      request.fail(new Failure(ErrorCode.connectionLoss, err));
      throw err;
    }
    if (header.zxid > 0n) this.lastZxid = header.zxid;
    try {
      request.reply(header.err, r);
    } catch (err) {
      request.fail(new Failure(ErrorCode.connectionLoss, err));
      throw err;
    }
    return true;
  }

  /**
   * The server's answer to the ConnectRequest. A session id of 0 or a timeout of 0 means the
   * session expired (only the server says so). Then, as ClientCnxn.primeConnection: credentials,
   * then the watches, then the requests that waited for the connection.
   */
  private onHandshake(response: ConnectResponse): void {
    if (response.timeOut <= 0 || response.sessionId === 0n) {
      log('session %s: the server says it has expired', this.idHex);
      this.end('expired');
      return;
    }
    // A session carried on is answered with its own id and password, or not at all.
    const password = response.passwd.toString('hex');
    if (this.session.timeoutMs > 0 && (response.sessionId !== this.session.id || password !== this.session.password)) {
      throw new ProtocolError('malformed', `the answer to the handshake names session 0x${response.sessionId.toString(16)}, not this session ${this.idHex}, or another password`);
    }
    const host = this.host as HostAddress;
    this.session = { id: response.sessionId, password, timeoutMs: response.timeOut };
    this.readTimeoutMs = (response.timeOut * 2) / 3;
    this.connectTimeoutMs = this.attemptTimeout(response.timeOut);
    this.hosts.onConnected();
    this.phase = 'connected';
    this.lastConnectError = undefined;
    log('session %s: connected to %s, timeout %d ms%s', this.idHex, formatHost(host), response.timeOut, response.readOnly ? ' (read-only server)' : '');
    (this.socket as ProtocolSocket).cork();
    for (const auth of this.auths ?? []) this.sendAuth(auth);
    this.sendSetWatches();
    const waiting = this.outbox;
    this.outbox = undefined;
    if (waiting !== undefined) for (const request of waiting) this.send(request);
    this.arm(0);
    this.emit('connected');
  }

  /**
   * The connection is gone (or an attempt failed): every request sent or waiting fails with
   * CONNECTIONLOSS, and the next server is tried with the same session.
   */
  private drop(cause: unknown): void {
    if (this.phase === 'closed' || this.phase === 'waiting') return;
    const wasConnected = this.phase === 'connected';
    // isNativeError: socket errors come from Node's own realm, which is not this one under a vm
    // context (Jest), and String() of them would start with "Error: ".
    const error = cause instanceof Error || types.isNativeError(cause) ? (cause as Error) : new Error(String(cause));
    const where = this.host ? formatHost(this.host) : '?';
    if (cause instanceof ProtocolError) {
      log('session %s: bad frame from %s (%s): %s; dropping the connection', this.idHex, where, cause.kind, cause.message);
    } else {
      log('session %s: %s %s: %s', this.idHex, wasConnected ? 'connection lost to' : 'could not connect to', where, error.message);
    }
    this.destroySocket();
    if (!wasConnected) this.lastConnectError = this.describeConnectError(error, where);
    this.failAll(new Failure(ErrorCode.connectionLoss, error));
    if (this.closing) {
      // The close was waiting for the server's answer; there will be none.
      this.end('closed');
      return;
    }
    this.phase = 'waiting';
    this.emit('connecting', wasConnected ? error : this.lastConnectError);
    this.nextAttempt();
  }

  private describeConnectError(error: Error, where: string): Error {
    return error.message.includes(where) || error.message.includes(this.host?.host ?? where)
      ? error
      : new Error(`connecting to ${where} failed: ${error.message}`, { cause: error });
  }

  /** The session is over: by expiry, an authentication failure, or our close. */
  private end(reason: CloseReason): void {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    this.closeReason = reason;
    clearTimeout(this.timer);
    this.destroySocket();
    const failure = this.closedFailure();
    this.failAll(failure);
    for (const auth of this.auths ?? []) {
      for (const waiter of auth.waiters) waiter.reject(failure);
      auth.waiters = [];
    }
    // The server drops a session's watches with it; the client tells their owners.
    this.registry.clear();
    log('session %s: closed (%s)', this.idHex, reason);
    // Not from inside the call that ended it (a close() made by a listener's own owner, say),
    // but right after it.
    queueMicrotask(() => this.emit('closed', reason));
  }

  private destroySocket(): void {
    const socket = this.socket;
    this.socket = undefined;
    clearTimeout(this.timer);
    socket?.destroy();
  }

  private failAll(failure: Failure): void {
    const requests = [...(this.pending ?? []), ...(this.outbox ?? [])];
    this.pending = undefined;
    this.outbox = undefined;
    this.authReplies = undefined;
    for (const request of requests) request.fail(failure);
  }

  // ---------------------------------------------------------------- timers

  /**
   * How long one attempt (the TCP connection and the handshake) may take: the session timeout
   * divided among the servers, as the Java client does, but at most a third of it. With one or two
   * servers the Java client waits half or all of the session timeout for an answer; a server that
   * accepts and never answers (ZooKeeper 3.8 leaves the socket of a connection it refuses while it
   * starts open when closing it fails) then costs the session its life. A third leaves time for
   * two more attempts before the session expires.
   */
  private attemptTimeout(sessionTimeoutMs: number): number {
    return sessionTimeoutMs / Math.max(this.hosts.size, 3);
  }

  /** Arms the one timer after `ms` (0: work out when from the state). */
  private arm(ms: number): void {
    clearTimeout(this.timer);
    // One function for every connection, given the connection: no closure per arming.
    this.timer = setTimeout(ProtocolConnection.fireTimer, Math.max(1, Math.ceil(ms || this.nextDeadline())), this);
    this.timer.unref();
  }

  private nextDeadline(): number {
    const now = performance.now();
    const idleSend = now - this.lastSendAt;
    return Math.min(this.readTimeoutMs - (now - this.lastRecvAt), this.timeToPing(idleSend));
  }

  /**
   * The Java client's ping rule: ping after half the read timeout (a third of the session timeout)
   * without sending, and at least every 10 seconds. (The Java client also pings a second early once
   * a second has passed, against a late timer; pinging at a third leaves the read timeout a whole
   * third to spare.)
   */
  private timeToPing(idleSendMs: number): number {
    if (idleSendMs > MAX_PING_INTERVAL_MS) return 0;
    return this.readTimeoutMs / 2 - idleSendMs;
  }

  private static fireTimer(connection: ProtocolConnection): void {
    connection.onTimer();
  }

  private onTimer(): void {
    const now = performance.now();
    const where = this.host ? formatHost(this.host) : '?';
    if (this.phase === 'connecting' || this.phase === 'handshake') {
      const elapsed = now - this.attemptStartedAt;
      if (elapsed >= this.connectTimeoutMs) {
        this.drop(new Error(`connecting to ${where} timed out after ${Math.round(elapsed)} ms (${this.phase === 'connecting' ? 'no connection' : 'no answer to the handshake'})`));
      } else {
        this.arm(this.connectTimeoutMs - elapsed);
      }
      return;
    }
    if (this.phase !== 'connected') return;
    const idleRecv = now - this.lastRecvAt;
    if (idleRecv >= this.readTimeoutMs) {
      this.drop(new Error(`no answer from ${where} for ${Math.round(idleRecv)} ms (read timeout ${Math.round(this.readTimeoutMs)} ms)`));
      return;
    }
    if (this.timeToPing(now - this.lastSendAt) <= 0) {
      this.write(frame(OpCode.ping, Xid.ping));
    }
    this.arm(0);
  }

  // ---------------------------------------------------------------- sending

  /** Writes a frame. Writes in one turn of the event loop leave in one system call. */
  private write(bytes: Buffer): void {
    (this.socket as ProtocolSocket).write(bytes);
    this.lastSendAt = performance.now();
  }

  /** Runs `send`, whose requests leave in one write when it returns (see ProtocolSocket.batch); as it comes while not connected. */
  batch<T>(send: () => T): T {
    const socket = this.socket;
    return this.phase === 'connected' && socket !== undefined ? socket.batch(send) : send();
  }

  /**
   * Sends a request now when connected, else with the next connection. The caller checks
   * `isClosed` first: a closed session sends nothing more.
   */
  send(request: Request): void {
    if (this.phase !== 'connected') {
      (this.outbox ??= []).push(request);
      return;
    }
    this.xid = this.xid >= MAX_XID ? 1 : this.xid + 1;
    request.xid = this.xid;
    request.frame.writeInt32BE(this.xid, LENGTH_BYTES);
    (this.pending ??= []).push(request);
    this.write(request.frame);
  }

  /**
   * Adds credentials to the session, sent now when connected and again on every later connection;
   * resolves once the server has accepted them.
   */
  addAuth(scheme: string, auth: string): Promise<void> {
    const entry: Auth = { scheme, auth: Buffer.from(auth, 'utf8'), waiters: [] };
    const accepted = new Promise<void>((resolve, reject) => entry.waiters.push({ resolve, reject }));
    (this.auths ??= []).push(entry);
    // Otherwise it goes out with the next connection's handshake.
    if (this.phase === 'connected') this.sendAuth(entry);
    return accepted;
  }

  private sendAuth(auth: Auth): void {
    (this.authReplies ??= []).push(auth);
    this.write(frame(OpCode.auth, Xid.auth, (w) => AuthPacketRecord.write(w, { type: 0, scheme: auth.scheme, auth: auth.auth })));
  }

  /**
   * Sets the watches again on a new connection (ClientCnxn.primeConnection): SetWatches, or
   * SetWatches2 when the batch holds persistent watches, in batches of about 128 KB of paths, with
   * the last zxid seen, so the server fires at once the watches whose node changed meanwhile.
   * ClientCnxn names an xid for them (-8), but its socket layer numbers them like any request
   * before they leave; so does this, and the bytes are the Java client's.
   */
  private sendSetWatches(): void {
    for (const batch of watchBatches(this.registry)) {
      const record = { relativeZxid: this.lastZxid, ...batch };
      const count = batch.dataWatches.length + batch.existWatches.length + batch.childWatches.length + batch.persistentWatches.length + batch.persistentRecursiveWatches.length;
      log('session %s: setting %d watches again (zxid 0x%s)', this.idHex, count, this.lastZxid.toString(16));
      this.send({
        xid: 0,
        frame: batch.persistent
          ? frame(OpCode.setWatches2, 0, (w) => SetWatches2Record.write(w, record))
          : frame(OpCode.setWatches, 0, (w) => SetWatchesRecord.write(w, record)),
        reply: (err) => {
          if (err !== 0) log('session %s: setting watches again failed (rc %d)', this.idHex, err);
        },
        fail: () => undefined,
      });
    }
  }

  private onAuthReply(err: number): void {
    const auth = this.authReplies?.shift();
    // Not even an AUTHFAILED that answers nothing ends the session.
    if (auth === undefined) throw new ProtocolError('unexpectedReply', `an answer to credentials (rc ${err}) came while none were sent`);
    if (err === ErrorCode.authFailed) {
      log('session %s: the server refused the %s credentials', this.idHex, auth?.scheme ?? '?');
      this.end('authFailed');
      return;
    }
    const waiters = auth.waiters;
    auth.waiters = [];
    for (const waiter of waiters) {
      if (err === 0) waiter.resolve();
      else waiter.reject(new Failure(err));
    }
  }

  private onNotification(event: { type: number; state: number; path: string }, zxid: bigint): void {
    const type = EVENT_TYPES[event.type];
    if (type === undefined) {
      // The Java client drops the connection on a type or state it does not know (fromInt throws).
      if (!(Object.values(EventType) as number[]).includes(event.type) || !KEEPER_STATES.has(event.state)) {
        throw new ProtocolError('malformed', `a notification of type ${event.type}, state ${event.state}`);
      }
      log('session %s: ignoring a notification of type %d on %s', this.idHex, event.type, event.path);
      return;
    }
    // A server sends node events in state SyncConnected only, on a valid path inside the chroot,
    // or on the ensemble's configuration, which is watched outside it (getConfig ignores the chroot).
    if (event.state !== SYNC_CONNECTED) throw new ProtocolError('malformed', `a ${type} notification in state ${event.state}`);
    const root = this.chroot.root;
    try {
      validatePath(event.path);
    } catch {
      throw new ProtocolError('malformed', `a ${type} notification on ${JSON.stringify(event.path)}, which is not a path`);
    }
    if (root !== undefined && event.path !== root && !event.path.startsWith(`${root}/`) && event.path !== CONFIG_NODE) {
      throw new ProtocolError('malformed', `a ${type} notification on ${event.path}, outside the chroot ${root}`);
    }
    const watchers = this.registry.materialize(event.type, event.path);
    if (watchers.size === 0) return;
    // 3.9+ servers send the zxid of the change; older ones -1.
    const watchEvent: WatchEvent = zxid >= 0n ? { type, path: this.chroot.strip(event.path), zxid } : { type, path: this.chroot.strip(event.path) };
    for (const watcher of watchers) this.callWatcher(watcher, watchEvent);
  }

  /** Calls a watcher; one that throws is logged. */
  callWatcher(watcher: Watcher, event: WatchEvent): void {
    try {
      watcher(event);
    } catch (err) {
      log('session %s: a watcher of %s threw: %O', this.idHex, event.path, err);
    }
  }

  /** What a call on a closed transport fails with: as the Java client, AUTHFAILED after a refusal, else SESSIONEXPIRED. */
  closedFailure(): Failure {
    return new Failure(this.closeReason === 'authFailed' ? ErrorCode.authFailed : ErrorCode.sessionExpired);
  }

  // ---------------------------------------------------------------- close

  async close(): Promise<void> {
    if (this.phase === 'closed') return;
    if (this.closing) return this.closing;
    log('session %s: closing', this.idHex);
    if (this.phase !== 'connected') {
      this.closing = Promise.resolve();
      this.end('closed');
      return;
    }
    // Ends the session on the server (its ephemeral nodes go). The server answers by closing the
    // connection once the session is gone; this waits for that, or a short bound.
    const boundMs = Math.min(MAX_CLOSE_WAIT_MS, this.readTimeoutMs);
    this.closing = new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(bound);
        this.end('closed');
        resolve();
      };
      const bound = setTimeout(() => {
        log('session %s: no answer to the close within %d ms', this.idHex, boundMs);
        done();
      }, boundMs);
      this.send({ xid: 0, frame: frame(OpCode.closeSession, 0), reply: done, fail: done });
    });
    return this.closing;
  }
}
