/**
 * The one door to the native client: the only module that imports `zookeeper`, loaded only when
 * the native transport is chosen. nativeValues (ids, passwords, stats) and nativeFailures (why a
 * connect failed) hold what needs no binding.
 *
 * It turns the binding's snake_case, callback-style calls into the `Transport` interface, and its
 * return codes into `ServerError`s.
 */
import { EventEmitter } from 'node:events';
import { inspect, type InspectOptions } from 'node:util';
import debug from 'debug';
import ZooKeeperBinding from 'zookeeper';
import { serverError, ServerError } from '../errors';
import { attemptFailure, inFlightFailureCode, initFailure, type Attempt } from './nativeFailures';
import { showAs } from '../util/redact';
import { normalizePassword, sessionIdFromHex, sessionIdToHex, toStat, type NativeStat } from './nativeValues';
import { CONFIG_NODE, splitConnectString, type ACL, type CloseReason, type CreateMode, type Stat, type Transport, type TransportEvents, type TransportOptions, type WatchEventType, type Watcher } from './Transport';

const log = debug('zk-recipes:transport');

/* eslint-disable @typescript-eslint/no-explicit-any -- the binding has no usable typings for its native object */
type NativeHandle = any;

/** The binding's constants. */
const C = (ZooKeeperBinding as any).constants as Record<string, number>;

const CREATE_FLAGS: Readonly<Record<CreateMode, number>> = Object.freeze({
  PERSISTENT: C.ZOO_PERSISTENT,
  PERSISTENT_SEQUENTIAL: C.ZOO_PERSISTENT_SEQUENTIAL,
  EPHEMERAL: C.ZOO_EPHEMERAL,
  EPHEMERAL_SEQUENTIAL: C.ZOO_EPHEMERAL_SEQUENTIAL,
  CONTAINER: C.ZOO_CONTAINER,
  PERSISTENT_WITH_TTL: C.ZOO_PERSISTENT_WITH_TTL,
  PERSISTENT_SEQUENTIAL_WITH_TTL: C.ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL,
});

const WATCH_TYPES: Readonly<Record<number, WatchEventType>> = Object.freeze({
  [C.ZOO_CREATED_EVENT]: 'created',
  [C.ZOO_DELETED_EVENT]: 'deleted',
  [C.ZOO_CHANGED_EVENT]: 'changed',
  [C.ZOO_CHILD_EVENT]: 'child',
  [C.ZOO_NOTWATCHING_EVENT]: 'notWatching',
});

const EXPIRED_STATE = C.ZOO_EXPIRED_SESSION_STATE;
/** Replies that mean the connection or the handle went; see NativeTransport. */
const DEFERRED_CODES: ReadonlySet<number> = new Set([C.ZCONNECTIONLOSS, C.ZOPERATIONTIMEOUT, C.ZSESSIONEXPIRED, C.ZCLOSING, C.ZINVALIDSTATE]);
const CONNECTED_STATE = C.ZOO_CONNECTED_STATE;
/** A TCP connect under way. */
const CONNECTING_STATE = C.ZOO_CONNECTING_STATE;
/** TCP connected, the session handshake sent: a server took the connection. */
const ASSOCIATING_STATE = C.ZOO_ASSOCIATING_STATE;
/**
 * The C client writes its own log to stderr. It is silent by default (zk-recipes logs through
 * `debug`); ZK_RECIPES_NATIVE_LOG_LEVEL=1..4 (error..debug) turns it on for diagnosis. The level
 * is global to the C library.
 */
const NATIVE_LOG_LEVEL = Math.max(0, Math.min(4, Number(process.env.ZK_RECIPES_NATIVE_LOG_LEVEL ?? 0) || 0));
const AUTH_FAILED_STATE = C.ZOO_AUTH_FAILED_STATE;

/** How long `close()` waits for a safe moment to close the native handle before it resolves anyway. */
const CLOSE_WAIT_MS = 1_000;

/**
 * The binding closes a handle as "expired" after this many consecutive empty reads from the
 * socket. The C client already detects dead connections by its own timeouts, and a false expiry
 * would end a session that is alive, so the count is made unreachable.
 */
const NO_RESPONSE_LIMIT = 0x7fffffff;

/**
 * A Transport over one session's native handle.
 *
 * Two things guard against the binding's handling of file descriptors. The binding watches the C
 * client's socket with a libuv poll handle that it brings up to date only from its own I/O and
 * timer callbacks; until then a socket the C client has closed stays registered with libuv under
 * its number. A socket opened meanwhile gets that number, and the binding's poll init for it fails
 * (the binding ignores the error and starts an uninitialised handle: a crash), or libuv hands its
 * events to the stale handle (a hang).
 * - Nothing of ours runs inside the binding's processing, where the C client may just have closed
 *   its socket: a native handle is opened (its socket created) from a fresh turn of the event
 *   loop, and connection events and connection-loss replies are passed on from one too. So no
 *   socket is opened, by us or by code reacting to us, while a stale registration exists.
 * - The C client closes its socket inside a call when the send finds the connection reset (see
 *   `call`). The handle is then replaced at once by one that attaches to the same session: closing
 *   the old one stops its poll, and the session lives on (no close request is sent on a dropped
 *   connection). Watches go with the old handle; their watchers get 'notWatching', so their owners
 *   read again and watch anew.
 */
export class NativeTransport implements Transport {
  private native: NativeHandle;
  private readonly events = new EventEmitter();
  private closed = false;
  /** The servers and chroot that handles connect to: the given ones until `updateServers`. */
  private connectString: string;
  /** Calls waiting for the next connection (see `addAuth`). */
  private readonly connectionWaiters = new Set<() => void>();
  /** Why the C client closed the handle, once it has. */
  private closedBy: CloseReason | undefined;
  /** Whether the last connection event said connected. */
  private live = false;
  /** Whether the current native handle is initialised (its init waits for a fresh turn of the event loop). */
  private opened = false;
  /** Resolves once the current native handle is initialised; each handle has its own. */
  private opening!: Promise<void>;
  /** Rejecters of the calls waiting for a reply, so a dropped connection can fail them at once. */
  private readonly pending = new Set<(err: ServerError) => void>();
  /** The native watches outstanding, each to be told 'notWatching' if its handle is replaced. */
  private readonly watching = new Set<() => void>();
  /** The session as of the last connection: a replacement handle keeps it until it connects. */
  private session: { id: bigint; password: string; timeoutMs: number };
  /** While not connected: the next look at whether the native handle has stalled (see `nudge`). */
  private nudgeTimer: NodeJS.Timeout | undefined;
  /** Credentials added so far, added again to a replacement handle. */
  private readonly auths: Array<readonly [string, string]> = [];
  /**
   * A lower bound of the last time the server was heard from. The C client answers pings itself,
   * so only replies and connection events are seen here; see `onNativeEvent` for the bound kept
   * when the connection drops.
   */
  lastHeardAt = 0;
  /** Why the last connection attempt failed, since the last connection. */
  private connectError: Error | undefined;
  /** The connection attempt under way, as last seen; see `observeAttempt`. */
  private attempt: Attempt | undefined;

  constructor(private readonly options: TransportOptions) {
    this.connectString = options.connectString;
    this.session = {
      id: options.sessionId ?? 0n,
      password: options.sessionId === undefined ? '0'.repeat(32) : normalizePassword(options.sessionPassword),
      timeoutMs: 0,
    };
    this.native = this.openHandle();
    // The first look comes soon, so that a first attempt that fails at once is reported at once.
    this.nudge(100);
  }

  /** What `util.inspect` shows: where and in which session, not the credentials or the session password. */
  [inspect.custom](_depth: number, options: InspectOptions, show: typeof inspect = inspect): string {
    const session = this.session.id === 0n ? null : `0x${this.session.id.toString(16)}`;
    return showAs('NativeTransport', { connectString: this.connectString, closed: this.closed, live: this.live, session }, options, show);
  }

  /** Our session for logs: its id as ZooKeeper prints it, or that there is none yet. */
  private get who(): string {
    return this.session.id === 0n ? 'without a session yet' : `of session 0x${this.session.id.toString(16)}`;
  }

  get lastConnectError(): Error | undefined {
    return this.connectError;
  }

  /**
   * The binding's create takes no ACL: its C++ side passes ZOO_OPEN_ACL_UNSAFE to zoo_acreate
   * (and zoo_acreate_ttl) whatever it is given, so every node starts open.
   */
  get aclOnCreate(): boolean {
    return false;
  }

  /**
   * While there is no connection, looks every so often (a twentieth of the session timeout,
   * 100 ms to 1 s) for a stalled handle, and replaces it. After a failed connection (a ping
   * timeout, a refused or reset connect) the C client asks to be called again soon, but the
   * binding keeps waiting on its old timer, up to a third of the session timeout: after a ping
   * timeout at two thirds, the next attempt came when the server expired the session, so a
   * session whose network healed at once was lost anyway. A handle whose C client has no socket
   * and no attempt under way (state 0) is replaced by one attaching to the same session, which
   * tries at once. Watches go with it, as in `replaceHandle`. Without a session the same holds: a
   * client started before its server waited as long for its next attempt, and one whose hosts did
   * not resolve never tried again.
   */
  private nudge(inMs?: number): void {
    clearTimeout(this.nudgeTimer);
    const everyMs = inMs ?? Math.min(1_000, Math.max(100, Math.round((this.session.timeoutMs || this.options.sessionTimeoutMs) / 20)));
    this.nudgeTimer = setTimeout(() => {
      this.nudgeTimer = undefined;
      if (this.closed || this.live) return;
      if (this.opened) {
        const state = this.native.state;
        this.observeAttempt(state);
        if (state === 0) {
          if (this.session.id !== 0n) log('handle %s has no connection attempt under way; replacing it', this.who);
          this.replaceHandle();
        }
      }
      this.nudge();
    }, everyMs);
    this.nudgeTimer.unref();
  }

  /**
   * Follows the C client's connection attempts through its state, sampled while there is no
   * connection: an attempt that ends without a connection (state 0 again) is reported as the
   * transport's `lastConnectError` and with a 'connecting' event, so that timeouts and debug lines
   * say what happened. A short attempt may pass unseen between two samples; the next one is seen.
   */
  private observeAttempt(state: number): void {
    const now = performance.now();
    if (state === CONNECTING_STATE || state === ASSOCIATING_STATE) {
      this.attempt ??= { startedAt: now, reachedServer: false };
      if (state === ASSOCIATING_STATE) this.attempt.reachedServer = true;
      return;
    }
    if (state !== 0 || this.attempt === undefined) return;
    const attempt = this.attempt;
    this.attempt = undefined;
    this.failedToConnect(attemptFailure(attempt, now, this.session.timeoutMs || this.options.sessionTimeoutMs));
  }

  /** Records why a connection attempt failed and tells the listeners (on a fresh turn of the event loop: we are called from one). */
  private failedToConnect(err: Error): void {
    this.connectError = err;
    this.events.emit('connecting', err);
  }

  /**
   * A new native handle, attaching to our session if we have one; initialised (connecting) on the
   * next turn of the event loop.
   */
  private openHandle(): NativeHandle {
    // Calls go to the native object directly: the JS wrapper formats every argument with
    // util.inspect on each call, which costs more than the round trip on loopback.
    const native = new (ZooKeeperBinding as any)({}).native;
    native.emit = (event: string, _self: unknown, arg: unknown) => {
      if (native === this.native) this.onNativeEvent(native, event, arg);
    };
    const config: Record<string, unknown> = {
      connect: this.connectString,
      timeout: this.options.sessionTimeoutMs,
      debug_level: NATIVE_LOG_LEVEL,
      host_order_deterministic: false,
      response_counter_limit: NO_RESPONSE_LIMIT,
    };
    if (this.session.id !== 0n) {
      config.client_id = sessionIdToHex(this.session.id);
      config.client_password = this.session.password;
    }
    this.opened = false;
    this.opening = new Promise((resolve) =>
      setImmediate(() => {
        if (this.closed || native !== this.native) return;
        // The binding returns the handle, or an Error (it does not throw) when the C client's init
        // fails; an Error of the main realm, so not `instanceof Error` under a vm context (Jest).
        const initialised: unknown = native.init(config);
        this.opened = true;
        if (initialised !== native) {
          this.attempt = undefined;
          this.failedToConnect(initFailure(initialised as { code?: string; message?: string }, this.connectString));
        } else {
          this.attempt = { startedAt: performance.now(), reachedServer: native.state === ASSOCIATING_STATE };
        }
        resolve();
      }),
    );
    return native;
  }

  get sessionId(): bigint {
    return this.closed ? 0n : this.session.id;
  }

  get sessionPassword(): string {
    return this.session.password;
  }

  get negotiatedSessionTimeoutMs(): number {
    return this.session.timeoutMs;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  on<E extends keyof TransportEvents>(event: E, listener: TransportEvents[E]): void {
    this.events.on(event, listener);
  }

  off<E extends keyof TransportEvents>(event: E, listener: TransportEvents[E]): void {
    this.events.off(event, listener);
  }

  /**
   * Closes the handle without blocking the event loop. The C client's close sends the close request
   * and then waits, holding the thread, up to 1.5 s for the server's answer (after up to 3 s to send
   * it) when it believes it is connected: a paused server, or a network silently down, froze the
   * whole process, and a lock holder's SUSPENDED came too late. So the handle is closed only once
   * that cannot block: when the server has just answered a probe (it answers the close as fast), or
   * when the C client has given the connection up (it then sends nothing). The promise resolves then,
   * or after CLOSE_WAIT_MS with the close still to come; requests still waiting for a reply have
   * failed with CLOSING by then, as on the protocol transport.
   */
  async close(): Promise<void> {
    try {
      await this.closeHandle();
    } finally {
      // What still waits for a reply ends with the close, not when the handle goes: that can be
      // long after, when the server does not answer.
      this.failPending(C.ZCLOSING, '/');
    }
  }

  private async closeHandle(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.nudgeTimer);
    this.wakeConnectionWaiters();
    log('closing handle %s', this.who);
    // A handle not yet initialised has nothing to close.
    if (!this.opened) return;
    const native = this.native;
    // Not connected, the close sends nothing.
    if (native.state !== CONNECTED_STATE) {
      native.close();
      return;
    }
    await new Promise<void>((resolve) => {
      const timers: { poll?: NodeJS.Timeout; bound?: NodeJS.Timeout } = {};
      let done = false;
      const closeNow = () => {
        if (done) return;
        done = true;
        clearInterval(timers.poll);
        clearTimeout(timers.bound);
        native.close();
        resolve();
      };
      // Never from inside the binding's own processing (see the class comment).
      const probed = native.a_exists('/', false, () => setImmediate(closeNow));
      // A send that found the connection reset closed the C client's socket inside the call: close
      // the handle at once, which stops its poll before another socket can take the number.
      if (probed !== 0 || native.state !== CONNECTED_STATE) return closeNow();
      timers.poll = setInterval(() => {
        if (native.state !== CONNECTED_STATE) closeNow();
      }, 50).unref();
      timers.bound = setTimeout(resolve, CLOSE_WAIT_MS).unref();
    });
  }

  /**
   * Our state follows the native event at once; listeners hear of it on a fresh turn of the event
   * loop (see the class comment), unless the handle has been replaced by then.
   */
  private onNativeEvent(native: NativeHandle, event: string, arg: unknown): void {
    const tell = (emit: () => void) =>
      setImmediate(() => {
        if (native === this.native) emit();
      });
    switch (event) {
      case 'connect':
        this.lastHeardAt = performance.now();
        this.session = { id: sessionIdFromHex(native.client_id), password: normalizePassword(native.client_password), timeoutMs: native.timeout };
        this.live = true;
        this.connectError = undefined;
        this.attempt = undefined;
        clearTimeout(this.nudgeTimer);
        tell(() => {
          this.wakeConnectionWaiters();
          this.events.emit('connected');
        });
        return;
      case 'connecting':
        if (!this.live) return;
        this.live = false;
        this.attempt = undefined;
        // The C client gives a connection up after two thirds of the session timeout without
        // hearing from the server, so it heard from it at most that long ago.
        this.lastHeardAt = Math.max(this.lastHeardAt, performance.now() - (this.session.timeoutMs * 2) / 3);
        this.nudge();
        tell(() => this.events.emit('connecting'));
        return;
      case 'close': {
        this.closed = true;
        this.live = false;
        clearTimeout(this.nudgeTimer);
        const reason: CloseReason =
          arg === EXPIRED_STATE ? 'expired' : arg === AUTH_FAILED_STATE ? 'authFailed' : 'closed';
        this.closedBy = reason;
        log('handle %s closed: %s', this.who, reason);
        tell(() => {
          this.wakeConnectionWaiters();
          this.events.emit('closed', reason);
        });
        return;
      }
      default:
        // Node events for the default watcher: we never set default watches.
        return;
    }
  }

  /**
   * Runs one native call. The binding returns a non-zero code synchronously (and never calls back)
   * when the handle is closed or the arguments are bad; that is turned into a rejection too.
   */
  private call<T>(path: string, start: (done: (rc: number, ...rest: any[]) => void) => number, map: (...rest: any[]) => T): Promise<T> {
    // Between a dropped connection and its replacement handle's init there is no connection.
    if (!this.opened && !this.closed) return Promise.reject(serverError(C.ZCONNECTIONLOSS, { path }));
    const result = new Promise<T>((resolve, reject) => {
      const fail = (err: ServerError) => {
        this.pending.delete(fail);
        reject(err);
      };
      this.pending.add(fail);
      let rc: number;
      try {
        rc = start((code: number, _message: string, ...rest: any[]) => {
          if (!DEFERRED_CODES.has(code)) this.lastHeardAt = performance.now();
          if (code === 0) {
            this.pending.delete(fail);
            resolve(map(...rest));
          } else if (DEFERRED_CODES.has(code)) {
            // The connection went: the C client may have just closed its socket (see the class comment).
            const err = serverError(inFlightFailureCode(code, this.closed), { path });
            setImmediate(() => fail(err));
          } else {
            fail(serverError(code, { path }));
          }
        });
      } catch (err) {
        fail(serverError('SYSTEMERROR', { path, cause: err, message: `native call failed at ${path}` }));
        return;
      }
      if (rc !== 0) {
        // A closed handle reports ZINVALIDSTATE; the session is gone from this handle's view.
        fail(serverError(this.closed && rc === C.ZINVALIDSTATE ? C.ZSESSIONEXPIRED : rc, { path }));
      }
    });
    if (this.live && this.native.state !== CONNECTED_STATE) this.onDroppedDuringCall(path);
    return result;
  }

  /**
   * The C client sends a request from inside the call; when the socket has just been reset, it
   * finds out there and drops the connection, but the binding only looks at the client again from
   * its own I/O and timer callbacks, up to a third of the session timeout later. Meanwhile nothing
   * would be reported and every call would hang. So the drop is reported now, and the calls that
   * wait for replies fail with CONNECTIONLOSS, which the retry loop handles. The C client itself
   * reconnects when the binding next looks at it.
   *
   * Listeners hear of it on a fresh turn of the event loop, as of every other change: the call may
   * come from the middle of a recipe's synchronous work (a release made just after a lease was
   * proved), and a state that changed there would abort that lease before its caller got it.
   */
  private onDroppedDuringCall(path: string): void {
    log('connection %s dropped while sending to %s; replacing the handle', this.who, path);
    this.live = false;
    if (!this.closed) {
      this.replaceHandle();
      this.nudge();
    }
    this.failPending(C.ZCONNECTIONLOSS, path);
    setImmediate(() => this.events.emit('connecting'));
  }

  /** Closes the current native handle and opens one that attaches to the same session (see the class comment). */
  private replaceHandle(): void {
    const old = this.native;
    this.native = this.openHandle();
    // No close request goes out: the connection is down. Its events no longer reach us.
    old.close();
    for (const [scheme, auth] of this.auths) {
      this.opening.then(() => this.call('/', (cb) => this.native.add_auth(scheme, auth, cb), () => undefined)).catch((err: unknown) => {
        log('adding %s auth to the replacement handle failed: %O', scheme, err);
      });
    }
    for (const unwatch of [...this.watching]) unwatch();
  }

  /**
   * A read that sets a watch. The C client keeps the watch only when the read succeeds (or, for
   * exists, finds no node); otherwise the watcher is forgotten, so a replacement handle does not
   * tell it 'notWatching' for a watch that was never set.
   */
  private watchedCall<T>(
    path: string,
    watcher: Watcher,
    setOnNoNode: boolean,
    start: (native: ReturnType<NativeTransport['nativeWatcher']>, done: (rc: number, ...rest: any[]) => void) => number,
    map: (...rest: any[]) => T,
  ): Promise<T> {
    const native = this.nativeWatcher(watcher, path);
    return this.call(path, (cb) => start(native, cb), map).catch((err: ServerError) => {
      if (!(setOnNoNode && err.code === 'NONODE')) this.watching.delete(native.unwatch);
      throw err;
    });
  }

  private nativeWatcher(watcher: Watcher, watchedPath: string): ((type: number, state: number, path: string) => void) & { unwatch: () => void } {
    let fired = false;
    const fire = (type: WatchEventType, path: string) => {
      if (fired) return;
      fired = true;
      this.watching.delete(unwatch);
      try {
        watcher({ type, path });
      } catch (err) {
        log('watcher for %s threw: %O', path, err);
      }
    };
    const unwatch = () => fire('notWatching', watchedPath);
    this.watching.add(unwatch);
    const native = (type: number, _state: number, path: string) => {
      // The C client also hands every session event (connecting, connected) to every watcher;
      // only node events end a one-shot watch.
      const eventType = WATCH_TYPES[type];
      if (eventType !== undefined) fire(eventType, path);
    };
    return Object.assign(native, { unwatch });
  }

  /** Creates the node with the open ACL, whatever `acl` says (see `aclOnCreate`). */
  create(path: string, data: Buffer, mode: CreateMode, _acl: readonly ACL[], ttlMs?: number): Promise<string> {
    const flags = CREATE_FLAGS[mode];
    if (ttlMs !== undefined && ttlMs > 0) {
      return this.call(path, (cb) => this.native.a_create_ttl(path, data, flags, ttlMs, cb), (created: string) => created);
    }
    return this.call(path, (cb) => this.native.a_create(path, data, flags, cb), (created: string) => created);
  }

  delete(path: string, version: number): Promise<void> {
    return this.call(path, (cb) => this.native.a_delete_(path, version, cb), () => undefined);
  }

  exists(path: string, watcher?: Watcher): Promise<Stat | null> {
    const map = (stat: NativeStat) => toStat(stat);
    const found = watcher
      ? this.watchedCall(path, watcher, true, (w, cb) => this.native.aw_exists(path, w, cb), map)
      : this.call(path, (cb) => this.native.a_exists(path, false, cb), map);
    return found.catch((err: ServerError) => {
      if (err.code === 'NONODE') return null;
      throw err;
    });
  }

  getData(path: string, watcher?: Watcher): Promise<{ data: Buffer; stat: Stat }> {
    return watcher
      ? this.watchedCall(path, watcher, false, (w, cb) => this.native.aw_get(path, w, cb), toData)
      : this.call(path, (cb) => this.native.a_get(path, false, cb), toData);
  }

  /** The C client reads the configuration node outside the chroot itself. */
  getConfig(watcher?: Watcher): Promise<{ data: Buffer; stat: Stat }> {
    return watcher
      ? this.watchedCall(CONFIG_NODE, watcher, false, (w, cb) => this.native.aw_getconfig(w, cb), toData)
      : this.call(CONFIG_NODE, (cb) => this.native.a_getconfig(false, cb), toData);
  }

  /**
   * The C client's zoo_set_servers. When it decides to move (away from a server no longer listed,
   * and, as the Java client, sometimes to balance the load when the list grows), it closes its
   * socket inside the call and says nothing: that is handled as a connection dropped while sending
   * (see `onDroppedDuringCall`), and the replacement handle connects to the new list. The C client
   * tells servers apart by address alone, not port: of members that share a host, it cannot see
   * that its own left, and moves only once that member stops serving it.
   */
  updateServers(hosts: string): void {
    this.connectString = hosts + splitConnectString(this.connectString).chroot;
    if (!this.opened || this.closed) return;
    this.native.set_servers(hosts);
    if (this.live && this.native.state !== CONNECTED_STATE) this.onDroppedDuringCall(CONFIG_NODE);
  }

  setData(path: string, data: Buffer, version: number): Promise<Stat> {
    return this.call(path, (cb) => this.native.a_set(path, data, version, cb), (stat: NativeStat) => toStat(stat));
  }

  getChildren(path: string, watcher?: Watcher): Promise<{ children: string[]; stat: Stat }> {
    const map = (children: string[] | null, stat: NativeStat) => ({ children: children ?? [], stat: toStat(stat) });
    return watcher
      ? this.watchedCall(path, watcher, false, (w, cb) => this.native.aw_get_children2(path, w, cb), map)
      : this.call(path, (cb) => this.native.a_get_children2(path, false, cb), map);
  }

  sync(path: string): Promise<void> {
    return this.call(path, (cb) => this.native.a_sync(path, cb), () => undefined);
  }

  getACL(path: string): Promise<{ acl: ACL[]; stat: Stat }> {
    return this.call(
      path,
      (cb) => this.native.a_get_acl(path, cb),
      (acl: Array<{ perms: number; scheme: string; auth: string }> | null, stat: NativeStat) => ({
        acl: (acl ?? []).map((a) => ({ perms: a.perms, scheme: a.scheme, id: a.auth })),
        stat: toStat(stat),
      }),
    );
  }

  setACL(path: string, acl: readonly ACL[], version: number): Promise<void> {
    // The native side reads `perm`, not `perms`.
    const nativeAcl = acl.map((a) => ({ perm: a.perms, scheme: a.scheme, auth: a.id }));
    return this.call(path, (cb) => this.native.a_set_acl(path, version, nativeAcl, cb), () => undefined);
  }

  /**
   * Adds credentials, sent again on every later connection; resolves once the server has accepted
   * them. The C client's answer to add_auth cannot say so: it completes every add_auth still waiting
   * with the first auth reply it reads, which may be for other credentials. So acceptance is proven
   * by the answer to a request sent after them on the same connection: the server reads a connection
   * in order, and closes it at the first credentials it refuses. A connection lost on the way proves
   * nothing; the C client sends every credential again on its next connection (a replacement handle
   * is given them), and the proof is sought there.
   */
  async addAuth(scheme: string, auth: string): Promise<void> {
    this.auths.push([scheme, auth]);
    await this.opening;
    let added = false;
    for (;;) {
      try {
        if (!added) await this.call('/', (cb) => this.native.add_auth(scheme, auth, cb), () => undefined);
        added = true;
        // A chroot not made yet (no node) is an answer all the same.
        await this.exists('/');
        return;
      } catch (err) {
        // A refusal closes the handle: what else the call saw is the refusal.
        if (this.native.state === AUTH_FAILED_STATE || this.closedBy === 'authFailed') throw serverError(C.ZAUTHFAILED, { path: '/' });
        if (this.closed || (err as ServerError).code !== 'CONNECTIONLOSS') throw err;
        // Kept by the C client (or given to the replacement handle) even when its call failed.
        added = true;
        if (!this.live) await this.nextConnection();
      }
    }
  }

  /** Fails every call waiting for a reply with `code`. */
  private failPending(code: number, path: string): void {
    for (const fail of [...this.pending]) fail(serverError(code, { path }));
  }

  /** Resolves at the next connection, or once the transport is closed. */
  private nextConnection(): Promise<void> {
    return new Promise((resolve) => this.connectionWaiters.add(resolve));
  }

  private wakeConnectionWaiters(): void {
    const waiters = [...this.connectionWaiters];
    this.connectionWaiters.clear();
    for (const wake of waiters) wake();
  }
}

/** A data reply: the data (none is empty) and the stat. */
function toData(stat: NativeStat, data: Buffer | null): { data: Buffer; stat: Stat } {
  return { data: data ?? Buffer.alloc(0), stat: toStat(stat) };
}

/** Builds a native transport; the default `TransportFactory`. */
export function createNativeTransport(options: TransportOptions): Transport {
  return new NativeTransport(options);
}
