/**
 * One TCP (or TLS) connection to one server, seen as frames: it connects, cuts what arrives into
 * frames and hands them on in order, and sends the writes of one turn of the event loop together.
 * What the frames mean is the session's business (ProtocolConnection.ts).
 */
import * as net from 'node:net';
import * as tls from 'node:tls';
import { inspect } from 'node:util';
import type { TransportOptions } from '../transport/Transport';
import { FrameDecoder, LENGTH_BYTES } from './framing';
import { formatHost, type HostAddress } from './hosts';
import { Xid } from './opcodes';
import { notZooKeeper } from './peer';

/** What the owner of a socket hears from it. Nothing is heard once the socket is destroyed. */
export interface SocketHandler {
  /** The socket is up (with TLS, its handshake is done too). */
  opened(): void;
  /** Handles one frame; true when it answered a request. Throws to drop the connection. */
  frame(body: Buffer): boolean;
  /** Whether the session is established on this connection. */
  established(): boolean;
  /** The connection failed or ended, or sent bytes that are not frames. */
  failed(cause: unknown): void;
}

/** How many of the first bytes are kept to show what a peer that is not a ZooKeeper server sent. */
const PEEK_BYTES = 64;

/**
 * The largest plausible answer to the handshake: ConnectResponse is 36 or 37 bytes with the
 * 16-byte password ZooKeeper sends; the margin allows for a longer password.
 */
const MAX_HANDSHAKE_REPLY_BYTES = 1024;

/**
 * A socket to `host`, connecting at once, that hands its frames to `handler` until destroyed.
 * Sockets are Node's: close-on-exec, never inherited by child processes.
 */
export class ProtocolSocket {
  private readonly socket: net.Socket;
  private readonly decoder: FrameDecoder;
  /** Frames received and not yet handled (see `drain`); made with the first, dropped once handled. */
  private backlog: Buffer[] | undefined;
  /** A drain of the backlog waits for the next turn of the event loop. */
  private draining = false;
  /** Takes each frame the decoder cuts into the backlog: one function for every chunk read. */
  private readonly takeFrame = (body: Buffer): void => {
    (this.backlog ??= []).push(body);
  };
  /** Writes held back until the end of this turn of the event loop. */
  private queued: Buffer[] | undefined;
  /** A frame has left at once in this turn: the next ones wait for its end. */
  private wroteThisTurn = false;
  private destroyed = false;
  /**
   * The first bytes received (up to PEEK_BYTES), kept until the first frame has been handled: if
   * the peer turns out not to be a ZooKeeper server, they show what it is.
   */
  private opening: Buffer | undefined = Buffer.alloc(0);

  /** The peer's address, once connected. */
  get remoteAddress(): string | undefined {
    return this.socket.remoteAddress;
  }

  /** What `util.inspect` shows: not the TLS socket, which keeps the connect options, key and passphrase included. */
  [inspect.custom](): string {
    return `ProtocolSocket { destroyed: ${this.destroyed} }`;
  }

  constructor(
    private readonly host: HostAddress,
    tlsOptions: TransportOptions['tls'],
    maxFrameBytes: number,
    private readonly handler: SocketHandler,
  ) {
    this.decoder = new FrameDecoder(maxFrameBytes);
    const socket = tlsOptions
      ? tls.connect({ servername: net.isIP(host.host) ? undefined : host.host, ...tlsOptions, host: host.host, port: host.port })
      : net.connect({ host: host.host, port: host.port });
    this.socket = socket;
    socket.setNoDelay(true);
    socket.once(tlsOptions ? 'secureConnect' : 'connect', () => {
      if (!this.destroyed) this.handler.opened();
    });
    socket.on('data', (chunk: Buffer) => {
      if (!this.destroyed) this.onData(chunk);
    });
    socket.on('end', () => {
      if (this.destroyed) return;
      try {
        this.decoder.end();
        this.handler.failed(new Error(`server ${formatHost(host)} closed the connection`));
      } catch (err) {
        this.handler.failed(this.firstReplyFailure(err));
      }
    });
    socket.on('error', (err) => {
      if (!this.destroyed) this.handler.failed(err);
    });
    socket.on('close', () => {
      if (!this.destroyed) this.handler.failed(new Error(`connection to ${formatHost(host)} closed`));
    });
  }

  private onData(chunk: Buffer): void {
    if (this.opening !== undefined && this.opening.length < PEEK_BYTES) {
      this.opening = Buffer.concat([this.opening, chunk.subarray(0, PEEK_BYTES - this.opening.length)]);
      // The first frame is the answer to the handshake, a few dozen bytes: a length far from that
      // is another protocol's bytes read as a length ("HTTP" is 1213486160), not a limit to raise.
      if (this.opening.length >= LENGTH_BYTES) {
        const length = this.opening.readInt32BE(0);
        if (length < 0 || length > MAX_HANDSHAKE_REPLY_BYTES) {
          this.handler.failed(notZooKeeper(this.host, this.opening, `announces a frame of ${length} bytes`));
          return;
        }
      }
    }
    try {
      this.decoder.push(chunk, this.takeFrame);
    } catch (err) {
      this.handler.failed(this.firstReplyFailure(err));
      return;
    }
    if (!this.draining) this.drain();
  }

  /** A failure while reading the first reply means the peer is not a ZooKeeper server; later ones are themselves. */
  private firstReplyFailure(err: unknown): unknown {
    if (this.opening === undefined || this.opening.length === 0) return err;
    return notZooKeeper(this.host, this.opening, `is not an answer to the handshake (${err instanceof Error ? err.message : String(err)})`);
  }

  /**
   * Handles the frames received, in order. A notification that follows a reply waits for a fresh
   * turn of the event loop: the caller that awaited the reply has then resumed (as with separate
   * callbacks), so a watcher never runs before the code that set its watch has seen the reply.
   */
  private drain(): void {
    this.draining = false;
    let replied = false;
    try {
      let backlog: Buffer[] | undefined;
      while ((backlog = this.backlog) !== undefined && !this.destroyed) {
        const body = backlog[0];
        if (replied && this.handler.established() && body.length >= 4 && body.readInt32BE(0) === Xid.notification) {
          this.draining = true;
          setImmediate(() => {
            if (!this.destroyed) this.drain();
          });
          return;
        }
        backlog.shift();
        if (backlog.length === 0) this.backlog = undefined;
        // A frame's handler may end the connection (an expired session, a close): the rest is dropped.
        replied = this.handler.frame(body) || replied;
        this.opening = undefined;
      }
    } catch (err) {
      if (!this.destroyed) this.handler.failed(this.firstReplyFailure(err));
    }
  }

  /**
   * Writes a frame. The first write of a turn of the event loop leaves at once: a request that
   * follows a reply (a release, a waiter's next read) does not wait behind the microtasks queued
   * meanwhile. Writes after it in the same turn wait in a list, and leave together, as one
   * buffer, at the end of the turn: a burst (a cache's reads, the requests held back for a
   * connection) costs one system call. Requests that belong together go out in one write with
   * `batch`.
   */
  write(bytes: Buffer): void {
    if (this.destroyed) return;
    if (this.queued === undefined && !this.wroteThisTurn) return this.writeNow(bytes);
    if (this.queued === undefined) this.cork();
    (this.queued as Buffer[]).push(bytes);
  }

  /**
   * Runs `send`, and writes the frames it wrote as one buffer when it returns (a create and the
   * listing pipelined behind it). Inside a turn already held back, they join what waits.
   */
  batch<T>(send: () => T): T {
    if (this.queued !== undefined || this.destroyed) return send();
    this.queued = [];
    try {
      return send();
    } finally {
      const queued = this.queued;
      this.queued = undefined;
      if (queued !== undefined && queued.length > 0 && !this.destroyed) this.writeNow(joined(queued));
    }
  }

  /** Holds writes back until the end of this turn of the event loop. */
  cork(): void {
    if (this.queued !== undefined || this.destroyed) return;
    this.queued = [];
    process.nextTick(flushSocket, this);
  }

  /** Sends the writes held back. */
  flush(): void {
    const queued = this.queued;
    this.queued = undefined;
    if (queued === undefined || queued.length === 0 || this.destroyed) return;
    this.socket.write(joined(queued));
  }

  /** The turn is over: the next write leaves at once. */
  endTurn(): void {
    this.wroteThisTurn = false;
  }

  /** Writes `bytes` now: the write of this turn that leaves at once. */
  private writeNow(bytes: Buffer): void {
    if (!this.wroteThisTurn) {
      this.wroteThisTurn = true;
      process.nextTick(endTurn, this);
    }
    this.socket.write(bytes);
  }

  /** Closes the socket; frames not yet handled are dropped and the handler hears no more. */
  destroy(): void {
    this.destroyed = true;
    this.queued = undefined;
    this.backlog = undefined;
    this.draining = false;
    this.socket.destroy();
  }
}

function flushSocket(socket: ProtocolSocket): void {
  socket.flush();
}

function endTurn(socket: ProtocolSocket): void {
  socket.endTurn();
}

function joined(frames: Buffer[]): Buffer {
  return frames.length === 1 ? frames[0] : Buffer.concat(frames);
}
