/**
 * A TCP fault-injection proxy for tests. It sits between ONE ZooKeeper client and the servers so
 * that client can be partitioned (cut, blackholed, slowed down) without touching any other client.
 */
import * as net from 'node:net';
import debug from 'debug';
import { InvalidArgumentError } from '../errors';

const log = debug('zk-recipes:testing:proxy');

/**
 * What the proxy does with traffic:
 * - `healthy`: forwards bytes both ways (after the configured delay, if any);
 * - `cut`: no connection survives: open ones are reset, new ones are reset as soon as accepted;
 * - `blackhole`: connections are kept and accepted, but nothing is forwarded either way.
 */
export type FaultMode = 'healthy' | 'cut' | 'blackhole';

/** Which way a chunk travels through the proxy. */
export type ChunkDirection = 'client->upstream' | 'upstream->client';

/**
 * What an interceptor does with one chunk: forward it, forward other bytes instead, drop it, drop
 * it and reset the connection (RST both ways), as a network that loses a reply would, or forward
 * some bytes and then end the connection both ways (FIN, once what is queued has gone), as a
 * connection cut in the middle of a frame would.
 */
export type ChunkVerdict = 'forward' | 'drop' | 'reset' | Buffer | { readonly forward: Buffer; readonly then: 'end' };

/**
 * Sees every chunk of data as the proxy receives it (before any delay) and decides its fate. The
 * connection id tells the connections apart: a new connection (after a reconnect) has a new id.
 */
export type ChunkInterceptor = (chunk: Buffer, info: { readonly connection: number; readonly direction: ChunkDirection }) => ChunkVerdict;

/** Options of {@link FaultProxy.start}. */
export interface FaultProxyOptions {
  /** Initial latency in ms added to every chunk in both directions (see {@link FaultProxy.delay}). Default 0. */
  delayMs?: number;
}

interface Upstream {
  host: string;
  port: number;
}

/** One queued item of one direction: bytes, a half-close (FIN) or a full close of the source. */
type Item =
  | { due: number; kind: 'data'; chunk: Buffer }
  | { due: number; kind: 'end' }
  | { due: number; kind: 'close' };

/** One direction of one proxied connection. */
interface Pipe {
  readonly name: ChunkDirection;
  queue: Item[];
  timer: NodeJS.Timeout | undefined;
  /** The source is paused because the destination's write buffer is full. */
  paused: boolean;
}

/** State of one proxied connection. */
interface Conn {
  readonly id: number;
  readonly listenPort: number;
  readonly client: net.Socket;
  /** Undefined for connections accepted while blackholed: nothing will ever be forwarded on them. */
  readonly upstream: net.Socket | undefined;
  /** Set once the connection has seen a blackhole: its byte streams have gaps, so it is destroyed on heal. */
  tainted: boolean;
  /** Torn down by the proxy (cut, heal, close or an error): nothing more is delivered. */
  torn: boolean;
  /** Ended by an interceptor: what was queued goes, then FIN both ways; nothing more is taken in. */
  ending: boolean;
  clientClosed: boolean;
  upstreamClosed: boolean;
  readonly up: Pipe;
  readonly down: Pipe;
}

const LOOPBACK_IPV4 = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function isLoopbackHost(host: string): boolean {
  const lower = host.toLowerCase();
  if (lower === 'localhost' || lower === '::1' || lower === '0:0:0:0:0:0:0:1') return true;
  const m = LOOPBACK_IPV4.exec(host);
  return m !== null && m.slice(1).every((octet) => Number(octet) <= 255);
}

function validateDelay(ms: unknown, what: string): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new InvalidArgumentError(`${what} must be a non-negative finite number of milliseconds, got ${String(ms)}`);
  }
  return ms;
}

/** Parses "host:port,host:port[/chroot]" into loopback servers and the chroot suffix ('' when none). */
function parseUpstream(upstream: unknown): { servers: Upstream[]; chroot: string } {
  if (typeof upstream !== 'string' || upstream.trim() === '') {
    throw new InvalidArgumentError('upstream must be a non-empty connect string "host:port,host:port[/chroot]"');
  }
  const text = upstream.trim();
  const slash = text.indexOf('/');
  const hostsPart = slash === -1 ? text : text.slice(0, slash);
  const chroot = slash === -1 ? '' : text.slice(slash);
  if (chroot !== '' && (chroot.length < 2 || /\s/.test(chroot))) {
    throw new InvalidArgumentError(`invalid chroot suffix "${chroot}" in upstream "${text}"`);
  }
  const servers = hostsPart.split(',').map((raw): Upstream => {
    const entry = raw.trim();
    if (entry === '') throw new InvalidArgumentError(`empty server entry in upstream "${text}"`);
    let host: string;
    let portText: string;
    const bracketed = /^\[([^\]]+)\]:(.*)$/.exec(entry);
    if (bracketed !== null) {
      host = bracketed[1]!;
      portText = bracketed[2]!;
    } else {
      const colon = entry.lastIndexOf(':');
      if (colon <= 0) throw new InvalidArgumentError(`server "${entry}" is not host:port`);
      host = entry.slice(0, colon);
      portText = entry.slice(colon + 1);
    }
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
      throw new InvalidArgumentError(`server "${entry}" has an invalid port (must be an integer 1-65535)`);
    }
    if (!isLoopbackHost(host)) {
      throw new InvalidArgumentError(`server "${entry}" is not a loopback address (127.x.x.x, localhost or ::1)`);
    }
    return { host, port: Number(portText) };
  });
  return { servers, chroot };
}

/** Resets a socket (RST) if it can; otherwise just destroys it. Never throws. */
function resetSocket(socket: net.Socket): void {
  try {
    // resetAndDestroy() on a socket still connecting waits for the connection before resetting;
    // a plain destroy() aborts the attempt at once.
    if (socket.connecting || socket.destroyed) socket.destroy();
    else socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

function destroySocket(socket: net.Socket | undefined): void {
  if (socket === undefined) return;
  try {
    socket.destroy();
  } catch {
    // destroy() does not throw in practice; a test helper must not crash the process regardless.
  }
}

/**
 * A TCP proxy with one listener per upstream ZooKeeper server, all on free ports of 127.0.0.1, for
 * injecting network faults between one client and the ensemble.
 *
 * Guarantees:
 * - only loopback upstreams are ever connected to;
 * - no socket or server of the proxy can emit an unhandled 'error', and no timer or socket callback
 *   of the proxy throws;
 * - in every mode, bytes of one direction of one connection are delivered in the order received,
 *   or not at all (never reordered, never duplicated, never delivered after a gap);
 * - a connection that lost bytes to a blackhole is destroyed on {@link heal}, never resumed;
 * - an interceptor ({@link intercept}) may drop or rewrite chunks: only then can bytes be lost or
 *   changed on a connection that stays open; one that ends a connection has nothing delivered on
 *   it after the bytes it forwarded.
 *
 * Debug output: `DEBUG=zk-recipes:testing:proxy`.
 */
export class FaultProxy implements AsyncDisposable {
  /**
   * The connect string to give the client: "127.0.0.1:p1,127.0.0.1:p2,…", one entry per upstream
   * server in the same order as the upstream string, followed by the upstream's chroot suffix if any.
   */
  readonly connectString: string;

  readonly #servers: net.Server[];
  readonly #conns = new Set<Conn>();
  readonly #name: string;
  #mode: FaultMode = 'healthy';
  #delayMs: number;
  #nextId = 1;
  readonly #interceptors = new Set<ChunkInterceptor>();
  #closing: Promise<void> | undefined;

  private constructor(servers: net.Server[], upstreams: Upstream[], chroot: string, delayMs: number) {
    this.#servers = servers;
    this.#delayMs = delayMs;
    const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
    this.connectString = ports.map((p) => `127.0.0.1:${p}`).join(',') + chroot;
    this.#name = `proxy[${ports.join(',')}]`;
    servers.forEach((server, i) => {
      const listenPort = ports[i]!;
      const target = upstreams[i]!;
      server.on('connection', (socket: net.Socket) => this.#onConnection(socket, listenPort, target));
    });
    log('%s: started for %s (delay %d ms)', this.#name, upstreams.map((u) => `${u.host}:${u.port}`).join(','), delayMs);
  }

  /**
   * Starts a proxy for `upstream`, a ZooKeeper connect string "host:port,host:port[/chroot]" whose
   * hosts must all be loopback (127.x.x.x, localhost, ::1). Opens one listener per upstream server
   * on a free port of 127.0.0.1; the proxy starts `healthy`.
   *
   * @throws InvalidArgumentError for a malformed or non-loopback upstream, or a bad `delayMs`
   *   (the returned promise rejects; nothing is left listening).
   */
  static async start(upstream: string, options: FaultProxyOptions = {}): Promise<FaultProxy> {
    const { servers: upstreams, chroot } = parseUpstream(upstream);
    const delayMs = options.delayMs === undefined ? 0 : validateDelay(options.delayMs, 'delayMs');
    const servers: net.Server[] = [];
    try {
      for (let i = 0; i < upstreams.length; i++) {
        const server = net.createServer({ allowHalfOpen: true });
        server.on('error', (err) => log('listener error: %s', err.message));
        servers.push(server);
        await new Promise<void>((resolve, reject) => {
          const onError = (err: Error): void => reject(err);
          server.once('error', onError);
          server.listen({ host: '127.0.0.1', port: 0 }, () => {
            server.off('error', onError);
            resolve();
          });
        });
      }
    } catch (err) {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      throw err;
    }
    return new FaultProxy(servers, upstreams, chroot, delayMs);
  }

  /** The current mode. */
  get mode(): FaultMode {
    return this.#mode;
  }

  /** Open client connections: accepted and not yet closed or torn down by the proxy. */
  get connectionCount(): number {
    let n = 0;
    for (const conn of this.#conns) if (!conn.clientClosed && !conn.torn) n++;
    return n;
  }

  /**
   * Partitions the client with errors: every open connection is reset at once (RST to the client
   * and to the server) and its pending delayed chunks are dropped; while cut, every new connection
   * is reset as soon as it is accepted.
   */
  cut(): void {
    this.#setMode('cut');
    for (const conn of [...this.#conns]) this.#teardown(conn, 'reset', 'cut');
  }

  /**
   * Partitions the client silently: connections stay open and new ones are accepted (but not
   * connected upstream), and nothing is forwarded in either direction. Bytes received meanwhile,
   * and delayed chunks still pending, are dropped, never delivered later. Every connection open
   * during a blackhole is destroyed by {@link heal}.
   */
  blackhole(): void {
    this.#setMode('blackhole');
    for (const conn of this.#conns) {
      conn.tainted = true;
      for (const pipe of [conn.up, conn.down]) {
        this.#clearPipe(pipe);
        if (pipe.paused) {
          // Keep reading so that the bytes are dropped rather than buffered by the kernel.
          pipe.paused = false;
          const source = pipe === conn.up ? conn.client : conn.upstream;
          if (source !== undefined && !source.destroyed) source.resume();
        }
      }
    }
  }

  /**
   * Back to healthy: new connections are forwarded. Connections that went through a blackhole are
   * reset (their byte streams have gaps, so they can never be valid again) so the client reconnects
   * cleanly; connections that never saw a blackhole are left alone. Keeps the configured delay.
   */
  heal(): void {
    this.#setMode('healthy');
    for (const conn of [...this.#conns]) {
      if (conn.tainted) this.#teardown(conn, 'reset', 'heal after blackhole');
    }
  }

  /**
   * Adds `ms` of latency to every chunk received from now on, in both directions: a chunk is
   * delivered no earlier than `ms` after it was received, and never before a chunk received earlier
   * in the same direction. `delay(0)` removes the latency for new chunks (chunks already waiting are
   * still delivered in order).
   *
   * @throws InvalidArgumentError if `ms` is not a non-negative finite number.
   */
  delay(ms: number): void {
    this.#delayMs = validateDelay(ms, 'delay');
    log('%s: delay %d ms', this.#name, this.#delayMs);
  }

  /**
   * Lets `interceptor` decide the fate of every data chunk received from now on, in both
   * directions, before any delay: for faults a byte stream cannot express otherwise, such as a
   * reply lost right after the server executed its request, or a corrupted frame. With several
   * interceptors, each sees what the previous one forwarded. One that throws forwards the chunk.
   * Returns a function that removes it.
   */
  intercept(interceptor: ChunkInterceptor): () => void {
    if (typeof interceptor !== 'function') throw new InvalidArgumentError('interceptor must be a function');
    this.#interceptors.add(interceptor);
    return () => {
      this.#interceptors.delete(interceptor);
    };
  }

  /**
   * Closes the listeners and destroys every connection. Idempotent: later calls return the same
   * promise, which resolves once every listener is closed (its port released).
   */
  close(): Promise<void> {
    if (this.#closing === undefined) {
      log('%s: closing (%d connections)', this.#name, this.connectionCount);
      for (const conn of [...this.#conns]) this.#teardown(conn, 'destroy', 'proxy closed');
      this.#closing = Promise.all(
        this.#servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              if (!server.listening) {
                resolve();
                return;
              }
              // The callback also receives ERR_SERVER_NOT_RUNNING; either way the port is released.
              server.close(() => resolve());
            }),
        ),
      ).then(() => log('%s: closed', this.#name));
    }
    return this.#closing;
  }

  /** Same as {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #setMode(mode: FaultMode): void {
    if (this.#mode !== mode) log('%s: mode %s -> %s (%d connections)', this.#name, this.#mode, mode, this.connectionCount);
    this.#mode = mode;
  }

  #onConnection(client: net.Socket, listenPort: number, target: Upstream): void {
    client.on('error', (err) => log('%s: client socket error on port %d: %s', this.#name, listenPort, err.message));
    if (this.#closing !== undefined) {
      destroySocket(client);
      return;
    }
    if (this.#mode === 'cut') {
      log('%s: port %d: connection reset (cut)', this.#name, listenPort);
      resetSocket(client);
      return;
    }
    const blackholed = this.#mode === 'blackhole';
    let upstream: net.Socket | undefined;
    if (!blackholed) {
      upstream = net.connect({ host: target.host, port: target.port, allowHalfOpen: true });
      upstream.on('error', (err) =>
        log('%s: port %d: upstream %s:%d error: %s', this.#name, listenPort, target.host, target.port, err.message),
      );
      upstream.setNoDelay(true);
    }
    client.setNoDelay(true);
    const conn: Conn = {
      id: this.#nextId++,
      listenPort,
      client,
      upstream,
      tainted: blackholed,
      torn: false,
      ending: false,
      clientClosed: false,
      upstreamClosed: upstream === undefined,
      up: { name: 'client->upstream', queue: [], timer: undefined, paused: false },
      down: { name: 'upstream->client', queue: [], timer: undefined, paused: false },
    };
    this.#conns.add(conn);
    log(
      '%s: port %d: connection #%d opened%s (%d open)',
      this.#name,
      listenPort,
      conn.id,
      blackholed ? ' (blackholed)' : '',
      this.connectionCount,
    );

    client.on('data', (chunk: Buffer) => this.#receive(conn, conn.up, { kind: 'data', chunk }));
    client.on('end', () => this.#receive(conn, conn.up, { kind: 'end' }));
    client.on('close', (hadError: boolean) => this.#onSocketClose(conn, 'client', hadError));
    if (upstream !== undefined) {
      upstream.on('data', (chunk: Buffer) => this.#receive(conn, conn.down, { kind: 'data', chunk }));
      upstream.on('end', () => this.#receive(conn, conn.down, { kind: 'end' }));
      upstream.on('close', (hadError: boolean) => this.#onSocketClose(conn, 'upstream', hadError));
    }
  }

  #onSocketClose(conn: Conn, side: 'client' | 'upstream', hadError: boolean): void {
    if (side === 'client') {
      conn.clientClosed = true;
      this.#clearPipe(conn.down); // nothing can be delivered to the client any more
    } else {
      conn.upstreamClosed = true;
      this.#clearPipe(conn.up);
    }
    if (!conn.torn) {
      if (hadError) {
        // An error (e.g. upstream refused, or a reset) aborts the whole connection; the client retries.
        this.#teardown(conn, 'destroy', `${side} closed with an error`);
        return;
      }
      // A clean close: let what is already queued from this side reach the other side, then close it.
      this.#receive(conn, side === 'client' ? conn.up : conn.down, { kind: 'close' });
    }
    if (conn.clientClosed && conn.upstreamClosed && this.#conns.delete(conn)) {
      log('%s: port %d: connection #%d closed (%d open)', this.#name, conn.listenPort, conn.id, this.connectionCount);
    }
  }

  /** Accepts one item from a source: drops it, delivers it now, or queues it behind the delay. */
  #receive(conn: Conn, pipe: Pipe, item: { kind: 'data'; chunk: Buffer } | { kind: 'end' } | { kind: 'close' }): void {
    if (conn.torn || conn.tainted || conn.ending) return; // cut/closed, a blackhole or ended: dropped, never buffered
    if (item.kind === 'data' && this.#interceptors.size > 0) {
      const verdict = this.#intercepted(conn, pipe, item.chunk);
      if (verdict === 'drop') return;
      if (verdict === 'reset') {
        this.#teardown(conn, 'reset', `interceptor on ${pipe.name}`);
        return;
      }
      if (!Buffer.isBuffer(verdict)) {
        conn.ending = true;
        this.#enqueue(conn, pipe, { kind: 'data', chunk: verdict.forward });
        this.#enqueue(conn, pipe, { kind: 'close' });
        this.#enqueue(conn, pipe === conn.up ? conn.down : conn.up, { kind: 'close' });
        return;
      }
      item = { kind: 'data', chunk: verdict };
    }
    this.#enqueue(conn, pipe, item);
  }

  /** Delivers an item now, or queues it behind the delay and the items before it. */
  #enqueue(conn: Conn, pipe: Pipe, item: { kind: 'data'; chunk: Buffer } | { kind: 'end' } | { kind: 'close' }): void {
    const now = Date.now();
    if (this.#delayMs === 0 && pipe.queue.length === 0) {
      this.#deliver(conn, pipe, item);
      return;
    }
    const last = pipe.queue[pipe.queue.length - 1];
    const due = Math.max(now + this.#delayMs, last === undefined ? 0 : last.due);
    pipe.queue.push({ ...item, due } as Item);
    if (pipe.timer === undefined) this.#schedule(conn, pipe);
  }

  /** Runs the interceptors on one chunk: the bytes to forward, 'drop' or 'reset', or bytes and the end. */
  #intercepted(conn: Conn, pipe: Pipe, chunk: Buffer): Exclude<ChunkVerdict, 'forward'> {
    let bytes = chunk;
    for (const interceptor of [...this.#interceptors]) {
      let verdict: ChunkVerdict;
      try {
        verdict = interceptor(bytes, { connection: conn.id, direction: pipe.name });
      } catch (err) {
        log('%s: connection #%d: an interceptor threw, forwarding: %s', this.#name, conn.id, (err as Error).message);
        continue;
      }
      if (verdict === 'drop' || verdict === 'reset') {
        log('%s: connection #%d: interceptor says %s on %s (%d bytes)', this.#name, conn.id, verdict, pipe.name, bytes.length);
        return verdict;
      }
      if (Buffer.isBuffer(verdict)) bytes = verdict;
      else if (typeof verdict === 'object' && verdict !== null && Buffer.isBuffer(verdict.forward)) {
        log('%s: connection #%d: interceptor ends the connection on %s after %d bytes', this.#name, conn.id, pipe.name, verdict.forward.length);
        return verdict;
      }
    }
    return bytes;
  }

  #schedule(conn: Conn, pipe: Pipe): void {
    const head = pipe.queue[0];
    if (head === undefined) return;
    pipe.timer = setTimeout(() => this.#flush(conn, pipe), Math.max(1, head.due - Date.now()));
  }

  #flush(conn: Conn, pipe: Pipe): void {
    pipe.timer = undefined;
    try {
      while (!conn.torn && !conn.tainted) {
        const head = pipe.queue[0];
        if (head === undefined || head.due > Date.now()) break;
        pipe.queue.shift();
        this.#deliver(conn, pipe, head);
      }
      if (!conn.torn && !conn.tainted) this.#schedule(conn, pipe);
    } catch (err) {
      log('%s: connection #%d: flush failed: %s', this.#name, conn.id, (err as Error).message);
      this.#teardown(conn, 'destroy', 'flush failure');
    }
  }

  #deliver(conn: Conn, pipe: Pipe, item: { kind: 'data'; chunk: Buffer } | { kind: 'end' } | { kind: 'close' }): void {
    if (conn.torn || conn.tainted) return;
    const toUpstream = pipe === conn.up;
    const source = toUpstream ? conn.client : conn.upstream;
    const dest = toUpstream ? conn.upstream : conn.client;
    if (dest === undefined || dest.destroyed) return;
    try {
      switch (item.kind) {
        case 'data':
          if (!dest.writable) return;
          if (!dest.write(item.chunk) && !pipe.paused && source !== undefined) {
            // Backpressure: stop reading the source until the destination drains.
            pipe.paused = true;
            source.pause();
            dest.once('drain', () => {
              if (!pipe.paused) return;
              pipe.paused = false;
              if (!source.destroyed) source.resume();
            });
          }
          break;
        case 'end':
          if (dest.writable) dest.end();
          break;
        case 'close':
          dest.destroySoon();
          break;
      }
    } catch (err) {
      log('%s: connection #%d: %s write failed: %s', this.#name, conn.id, pipe.name, (err as Error).message);
      this.#teardown(conn, 'destroy', 'write failure');
    }
  }

  #clearPipe(pipe: Pipe): void {
    if (pipe.timer !== undefined) clearTimeout(pipe.timer);
    pipe.timer = undefined;
    pipe.queue = [];
  }

  /** Ends a connection now: drops pending chunks and resets or destroys both sockets. Idempotent. */
  #teardown(conn: Conn, how: 'reset' | 'destroy', why: string): void {
    if (conn.torn) return;
    conn.torn = true;
    this.#clearPipe(conn.up);
    this.#clearPipe(conn.down);
    for (const socket of [conn.client, conn.upstream]) {
      if (socket === undefined) continue;
      if (how === 'reset') resetSocket(socket);
      else destroySocket(socket);
    }
    this.#conns.delete(conn);
    log('%s: port %d: connection #%d torn down (%s) (%d open)', this.#name, conn.listenPort, conn.id, why, this.connectionCount);
  }
}
