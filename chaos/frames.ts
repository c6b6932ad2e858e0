/**
 * Just enough of ZooKeeper's framing to lose one reply on purpose: a FaultProxy interceptor that
 * lets a create request through, waits for the server's reply to that very request, and resets the
 * connection instead of delivering it. The server has executed the create; the client never hears
 * of it, and must find out on its own (protection, or a retry that may duplicate).
 *
 * Frames are a 4-byte big-endian length and a body. A request body starts with xid and opcode; a
 * reply body with xid, zxid and error code. The first frame of a connection is the session
 * handshake, which has neither.
 */
import type { ChunkInterceptor } from '../src/testing';

/** Opcodes that create a node: create, create2, createContainer, createTTL. */
const CREATE_OPS: ReadonlySet<number> = new Set([1, 15, 19, 21]);
/** Bytes of a frame's body kept for inspection: enough for the header and a path. */
const HEAD_BYTES = 256;
/** ZooKeeper's default jute.maxbuffer: a longer frame means we are not at a frame boundary. */
const MAX_FRAME = 0xfffff + 1024;

/** One frame seen: its length and the first bytes of its body. */
export interface FrameHead {
  readonly length: number;
  readonly head: Buffer;
}

/** Finds frame boundaries in one direction of one connection, across chunks. */
export class FrameScanner {
  private partial = Buffer.alloc(0);
  private skip = 0;
  private broken = false;

  /** The frames whose head completes in this chunk. */
  feed(chunk: Buffer): FrameHead[] {
    const frames: FrameHead[] = [];
    let i = 0;
    while (!this.broken && i < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - i);
        this.skip -= n;
        i += n;
        continue;
      }
      const rest = this.partial.length > 0 ? Buffer.concat([this.partial, chunk.subarray(i)]) : chunk.subarray(i);
      if (rest.length < 4) {
        this.partial = Buffer.from(rest);
        return frames;
      }
      const length = rest.readInt32BE(0);
      if (length < 0 || length > MAX_FRAME) {
        // Not a frame boundary (we joined mid-stream): give up on this direction.
        this.broken = true;
        return frames;
      }
      const headLength = Math.min(length, HEAD_BYTES);
      if (rest.length < 4 + headLength) {
        this.partial = Buffer.from(rest);
        return frames;
      }
      frames.push({ length, head: Buffer.from(rest.subarray(4, 4 + headLength)) });
      const fromChunk = 4 + length - this.partial.length;
      this.partial = Buffer.alloc(0);
      const left = chunk.length - i;
      if (fromChunk > left) {
        this.skip = fromChunk - left;
        return frames;
      }
      i += fromChunk;
    }
    return frames;
  }
}

/** The session handshake (ConnectRequest): protocol version 0 and a 44- or 45-byte body. */
function isHandshake(frame: FrameHead): boolean {
  return (frame.length === 44 || frame.length === 45) && frame.head.length >= 4 && frame.head.readInt32BE(0) === 0;
}

/** The xid and path of a create request, if the frame is one. */
function createRequest(frame: FrameHead): { xid: number; path: string } | undefined {
  if (isHandshake(frame) || frame.head.length < 12) return undefined;
  const xid = frame.head.readInt32BE(0);
  const op = frame.head.readInt32BE(4);
  if (xid <= 0 || !CREATE_OPS.has(op)) return undefined;
  const pathLength = frame.head.readInt32BE(8);
  const path = frame.head.subarray(12, 12 + Math.max(0, pathLength)).toString('utf8');
  return { xid, path };
}

/** What a lost reply was: the connection, the request's xid and the path it created. */
export interface LostReply {
  readonly connection: number;
  readonly xid: number;
  readonly path: string;
}

/**
 * An interceptor that loses the reply to the next create of a path under `pathPrefix`: the request
 * goes through, and the connection is reset when its reply comes back. Fires once; `onLost` is
 * told what was lost.
 */
export function loseReplyToCreate(pathPrefix: string, onLost: (lost: LostReply) => void): ChunkInterceptor {
  const scanners = new Map<string, FrameScanner>();
  let target: LostReply | undefined;
  let fired = false;
  return (chunk, { connection, direction }) => {
    if (fired) return 'forward';
    const key = `${connection}:${direction}`;
    let scanner = scanners.get(key);
    if (!scanner) scanners.set(key, (scanner = new FrameScanner()));
    const frames = scanner.feed(chunk);
    if (direction === 'client->upstream') {
      if (target === undefined) {
        for (const frame of frames) {
          const create = createRequest(frame);
          if (create && create.path.startsWith(pathPrefix)) {
            target = { connection, ...create };
            break;
          }
        }
      }
      return 'forward';
    }
    if (target !== undefined && connection === target.connection && frames.some((f) => f.head.length >= 4 && f.head.readInt32BE(0) === target?.xid)) {
      fired = true;
      onLost(target);
      return 'reset';
    }
    return 'forward';
  };
}

/** The xid and opcode of a request, if the frame is one (not the handshake, not a ping or auth). */
function requestHead(frame: FrameHead): { xid: number; op: number } | undefined {
  if (isHandshake(frame) || frame.head.length < 8) return undefined;
  const xid = frame.head.readInt32BE(0);
  return xid > 0 ? { xid, op: frame.head.readInt32BE(4) } : undefined;
}

/** What {@link loseNext} loses: a request before the server sees it, or the reply to one after the server ran it. */
export type LossPoint = 'request' | 'reply';

/**
 * An interceptor that loses the next `count` requests with an opcode in `ops` (14 is multi, 3
 * exists, 9 sync, ...), at `point`: the request itself (the connection is reset before its
 * bytes reach the server, so it never runs), or its reply (the request goes through and the
 * connection is reset when its reply comes back). `onLost` is told each time.
 */
export function loseNext(ops: ReadonlySet<number>, point: LossPoint, onLost: (lost: { connection: number; xid: number; op: number }) => void, count = 1): ChunkInterceptor {
  const scanners = new Map<string, FrameScanner>();
  let target: { connection: number; xid: number; op: number } | undefined;
  let left = count;
  return (chunk, { connection, direction }) => {
    if (left <= 0) return 'forward';
    const key = `${connection}:${direction}`;
    let scanner = scanners.get(key);
    if (!scanner) scanners.set(key, (scanner = new FrameScanner()));
    const frames = scanner.feed(chunk);
    if (direction === 'client->upstream') {
      if (target !== undefined) return 'forward';
      for (const frame of frames) {
        const request = requestHead(frame);
        if (request === undefined || !ops.has(request.op)) continue;
        if (point === 'request') {
          left--;
          onLost({ connection, ...request });
          return 'reset';
        }
        target = { connection, ...request };
        break;
      }
      return 'forward';
    }
    if (target !== undefined && connection === target.connection && frames.some((f) => f.head.length >= 4 && f.head.readInt32BE(0) === target?.xid)) {
      const lost = target;
      target = undefined;
      left--;
      onLost(lost);
      return 'reset';
    }
    return 'forward';
  };
}

/** Counts the requests of each opcode that pass through an interceptor (one direction: client to server). */
export function countRequests(): { interceptor: ChunkInterceptor; count(op: number): number } {
  const scanners = new Map<number, FrameScanner>();
  const counts = new Map<number, number>();
  return {
    interceptor: (chunk, { connection, direction }) => {
      if (direction !== 'client->upstream') return 'forward';
      let scanner = scanners.get(connection);
      if (!scanner) scanners.set(connection, (scanner = new FrameScanner()));
      for (const frame of scanner.feed(chunk)) {
        const request = requestHead(frame);
        if (request !== undefined) counts.set(request.op, (counts.get(request.op) ?? 0) + 1);
      }
      return 'forward';
    },
    count: (op) => counts.get(op) ?? 0,
  };
}
