/**
 * Just enough of ZooKeeper's framing to lose one reply on purpose: a FaultProxy interceptor that
 * lets a create request through, waits for the server's reply to that very request, and resets the
 * connection instead of delivering it. The server has executed the create; the client never hears
 * of it, and must find out on its own (protection, or a retry that may duplicate).
 *
 * It also mutates the servers' replies at random (flipped bytes, cut chunks, chunks sent twice),
 * for a client that must drop a connection whose stream went wrong, and never act on it.
 *
 * Frames are a 4-byte big-endian length and a body. A request body starts with xid and opcode; a
 * reply body with xid, zxid and error code. The first frame of a connection is the session
 * handshake, which has neither.
 */
import { InvalidArgumentError } from '../src/errors';
import type { ChunkInterceptor } from '../src/testing';
import { Random } from './random';

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

/** What {@link mutateReplies} may do to a chunk of a server's reply stream. */
export type MutationKind = 'flip' | 'truncate' | 'duplicate';

export const MUTATION_KINDS: readonly MutationKind[] = Object.freeze(['flip', 'truncate', 'duplicate'] as MutationKind[]);

/** Options of {@link mutateReplies}. */
export interface MutateRepliesOptions {
  /** The seed of the draws: which chunks, which kind, which bytes. */
  readonly seed: number;
  /** The chance that one chunk from the server is mutated, in (0, 1]. */
  readonly rate: number;
  /** The kinds drawn from, equally often. Default all three. */
  readonly kinds?: readonly MutationKind[];
  /**
   * Flips only the bytes whose damage a client can see, and leaves alone those it can only take
   * on trust, because any value of them is valid: the whole answer to the handshake (session id,
   * password, timeout), a reply's zxid, and a reply's body past its header (data, a stat, names, a
   * path), save a notification's event type and state. What stays open to flips: every frame's
   * length, a reply's xid and error code, and a notification's type and state. A changed value
   * of the spared bytes does not break a frame; the client hands it on as the server's own (see
   * the chaos README). Truncations and duplicates still take any chunk. Default false.
   */
  readonly spareTrusted?: boolean;
}

/** How many chunks from servers {@link mutateReplies} saw, and how many it changed, by kind. */
export interface MutationCounts {
  chunks: number;
  flip: number;
  truncate: number;
  duplicate: number;
}

/**
 * Where each byte of one direction falls in its frame, to tell the bytes `spareTrusted` spares:
 * the first frame (the answer to the handshake), and in every later frame all but its length
 * prefix (bytes 0-3), its xid (4-7) and error code (16-19), and for a notification (xid -1) its
 * event type and state (20-27). It follows the server's own frames, so what a mutation does to
 * the client's view does not move it.
 */
class FrameOffsets {
  private frameNo = 0;
  private at = 0;
  private size = -1;
  private readonly head = Buffer.alloc(8);
  private xid = 0;

  /** Whether each byte of `chunk`, which comes next in the stream, is one a client takes on trust. */
  trusted(chunk: Buffer): boolean[] {
    const marks: boolean[] = new Array<boolean>(chunk.length);
    for (let i = 0; i < chunk.length; i++) {
      if (this.at < 8) {
        this.head[this.at] = chunk[i];
        if (this.at === 3) this.size = 4 + Math.max(0, this.head.readInt32BE(0));
        if (this.at === 7) this.xid = this.head.readInt32BE(4);
      }
      marks[i] = this.frameNo === 0 || !(this.at < 8 || (this.at >= 16 && this.at < 20) || (this.xid === -1 && this.at >= 20 && this.at < 28));
      this.at++;
      if (this.at === this.size) {
        this.frameNo++;
        this.at = 0;
        this.size = -1;
      }
    }
    return marks;
  }
}

/**
 * A FaultProxy interceptor that mutates chunks of the servers' replies at random, from a seed:
 * with chance `rate`, one chunk is
 * - `flip`: 1-3 of its bytes XORed with a non-zero byte, and forwarded;
 * - `truncate`: cut at a random point: the head is forwarded, the tail lost, and the connection
 *   ended both ways right after the head (FIN): the client never reads past the gap, and the
 *   tail is never forwarded later;
 * - `duplicate`: forwarded twice in a row.
 * Requests (client to server) pass untouched. Remove it from the proxy to heal.
 *
 * @throws InvalidArgumentError for a rate outside (0, 1], or no or unknown kinds.
 */
export function mutateReplies(options: MutateRepliesOptions): { interceptor: ChunkInterceptor; counts: MutationCounts } {
  const { seed, rate } = options;
  const kinds = options.kinds ?? MUTATION_KINDS;
  if (typeof rate !== 'number' || !(rate > 0 && rate <= 1)) throw new InvalidArgumentError(`rate must be a number in (0, 1], got ${String(rate)}`);
  if (!Number.isInteger(seed)) throw new InvalidArgumentError(`seed must be an integer, got ${String(seed)}`);
  if (!Array.isArray(kinds) || kinds.length === 0 || kinds.some((k) => !MUTATION_KINDS.includes(k))) {
    throw new InvalidArgumentError(`kinds must be some of ${MUTATION_KINDS.join(', ')}, got ${String(kinds)}`);
  }
  const rng = new Random(seed);
  const offsets = new Map<number, FrameOffsets>();
  const counts: MutationCounts = { chunks: 0, flip: 0, truncate: 0, duplicate: 0 };
  const interceptor: ChunkInterceptor = (chunk, { connection, direction }) => {
    if (direction !== 'upstream->client') return 'forward';
    counts.chunks++;
    let frames = offsets.get(connection);
    if (!frames) offsets.set(connection, (frames = new FrameOffsets()));
    const trusted = frames.trusted(chunk);
    if (!rng.chance(rate)) return 'forward';
    const kind = rng.pick(kinds);
    switch (kind) {
      case 'flip': {
        const open = trusted.flatMap((t, i) => (options.spareTrusted === true && t ? [] : [i]));
        if (open.length === 0) return 'forward';
        const out = Buffer.from(chunk);
        for (let n = rng.int(1, 3); n > 0; n--) out[rng.pick(open)] ^= rng.int(1, 255);
        counts.flip++;
        return out;
      }
      case 'truncate':
        counts.truncate++;
        offsets.delete(connection);
        return { forward: Buffer.from(chunk.subarray(0, rng.int(0, chunk.length - 1))), then: 'end' };
      case 'duplicate':
        counts.duplicate++;
        return Buffer.concat([chunk, chunk]);
    }
    return 'forward';
  };
  return { interceptor, counts };
}
