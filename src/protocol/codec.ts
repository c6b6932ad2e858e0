/**
 * Hand-written encoders and decoders for the messages of a lock's path and of reads: the create,
 * getChildren2, getData, exists, delete and setData requests; the reply header, Stat, their replies
 * and the watcher event. The schema records (records.ts) stay the reference and handle every other
 * message: each function here writes or reads exactly the bytes of its record there
 * (codec.test.ts checks them against each other on random values).
 *
 * Why by hand: the schema's generic reader builds every record by keyed stores into an empty
 * object (megamorphic for everything that reads them) and calls a closure per field, and a request
 * went through a growable writer of 256 bytes. Here a request is counted first and written into a
 * buffer of its exact size, and a reply is read into object literals of one shape each.
 */
// Node's global Buffer is a getter on globalThis, called at every use; the module's binding is not.
import { Buffer } from 'node:buffer';
import type { ACL, Stat } from '../transport/Transport';
import { LENGTH_BYTES } from './framing';
import type { JuteReader } from './jute';
import type { ReplyHeader, WatcherEvent } from './records';

/** The length prefix, the xid (written in when sent, see ProtocolConnection.send) and the opcode. */
const HEADER_BYTES = LENGTH_BYTES + 8;

/** A Stat on the wire: 6 longs and 5 ints. */
const STAT_BYTES = 68;

/** A frame of `bodyBytes` after the request header: its length and opcode written, the xid 0. */
function start(opcode: number, bodyBytes: number): Buffer {
  const b = Buffer.allocUnsafe(HEADER_BYTES + bodyBytes);
  b.writeInt32BE(HEADER_BYTES - LENGTH_BYTES + bodyBytes, 0);
  b.writeInt32BE(0, LENGTH_BYTES);
  b.writeInt32BE(opcode, LENGTH_BYTES + 4);
  return b;
}

/** Writes a string of `bytes` UTF-8 bytes (counted by the caller) with its length; returns the offset after it. */
function putString(b: Buffer, at: number, s: string, bytes: number): number {
  b.writeInt32BE(bytes, at);
  if (bytes > 0) b.write(s, at + 4, bytes, 'utf8');
  return at + 4 + bytes;
}

function putBuffer(b: Buffer, at: number, data: Uint8Array): number {
  b.writeInt32BE(data.length, at);
  b.set(data, at + 4);
  return at + 4 + data.length;
}

/** ExistsRequest, GetDataRequest, GetChildren2Request (PathWatchRecord), framed. */
export function encodePathWatch(opcode: number, path: string, watch: boolean): Buffer {
  const pathBytes = Buffer.byteLength(path, 'utf8');
  const b = start(opcode, 4 + pathBytes + 1);
  const at = putString(b, HEADER_BYTES, path, pathBytes);
  b[at] = watch ? 1 : 0;
  return b;
}

/** DeleteRequest (PathVersionRecord), framed. */
export function encodePathVersion(opcode: number, path: string, version: number): Buffer {
  const pathBytes = Buffer.byteLength(path, 'utf8');
  const b = start(opcode, 4 + pathBytes + 4);
  b.writeInt32BE(version, putString(b, HEADER_BYTES, path, pathBytes));
  return b;
}

/** CreateRequest, for create, create2 and createContainer (CreateRequestRecord), framed. */
export function encodeCreate(opcode: number, path: string, data: Uint8Array, acl: readonly ACL[], flags: number): Buffer {
  const pathBytes = Buffer.byteLength(path, 'utf8');
  let bytes = 4 + pathBytes + 4 + data.length + 4 + 4;
  // Indexed loops: for-of left an iterator per call in the profile.
  for (let i = 0; i < acl.length; i++) bytes += 12 + Buffer.byteLength(acl[i].scheme, 'utf8') + Buffer.byteLength(acl[i].id, 'utf8');
  const b = start(opcode, bytes);
  let at = putString(b, HEADER_BYTES, path, pathBytes);
  at = putBuffer(b, at, data);
  b.writeInt32BE(acl.length, at);
  at += 4;
  for (let i = 0; i < acl.length; i++) {
    const entry = acl[i];
    b.writeInt32BE(entry.perms, at);
    // An ACL's strings are short: counted again rather than kept from the first count.
    at = putString(b, at + 4, entry.scheme, Buffer.byteLength(entry.scheme, 'utf8'));
    at = putString(b, at, entry.id, Buffer.byteLength(entry.id, 'utf8'));
  }
  b.writeInt32BE(flags, at);
  return b;
}

/** SetDataRequest (SetDataRequestRecord), framed. */
export function encodeSetData(opcode: number, path: string, data: Uint8Array, version: number): Buffer {
  const pathBytes = Buffer.byteLength(path, 'utf8');
  const b = start(opcode, 4 + pathBytes + 4 + data.length + 4);
  b.writeInt32BE(version, putBuffer(b, putString(b, HEADER_BYTES, path, pathBytes), data));
  return b;
}

/**
 * The last long read of one kind, handed out again when the next one has the same bytes. A bigint
 * is an immutable value (=== and Object.is compare values), so sharing one is invisible; and the
 * longs of a lock's replies repeat: a create's reply header, czxid, mzxid and pzxid are one zxid,
 * and a session's nodes all carry its id as ephemeralOwner.
 */
class LastLong {
  hi = 0;
  lo = 0;
  value = 0n;
}

const lastZxid = new LastLong();
const lastOwner = new LastLong();

/**
 * A long as a bigint: one BigInt made from a number when it is exact as one (below 2^53 in
 * magnitude, as every zxid in practice), where readBigInt64BE makes several; none when `last` has it.
 */
function long(b: Buffer, at: number, last: LastLong): bigint {
  const hi = b.readInt32BE(at);
  const lo = b.readUInt32BE(at + 4);
  if (hi === last.hi && lo === last.lo) return last.value;
  const value = hi >= -0x20_0000 && hi < 0x20_0000 ? BigInt(hi * 0x1_0000_0000 + lo) : b.readBigInt64BE(at);
  last.hi = hi;
  last.lo = lo;
  last.value = value;
  return value;
}

/** ReplyHeader. */
export function readReplyHeader(r: JuteReader): ReplyHeader {
  const b = r.buf;
  const at = r.take(16, 'a reply header');
  return { xid: b.readInt32BE(at), zxid: long(b, at + 4, lastZxid), err: b.readInt32BE(at + 12) };
}

/** WatcherEvent. */
export function readWatcherEvent(r: JuteReader): WatcherEvent {
  const type = r.int();
  const state = r.int();
  return { type, state, path: r.string() };
}

/** Stat: one object literal, its fields in wire order (the order the schema record gives them). */
export function readStat(r: JuteReader): Stat {
  const b = r.buf;
  const at = r.take(STAT_BYTES, 'a Stat');
  return {
    czxid: long(b, at, lastZxid),
    mzxid: long(b, at + 8, lastZxid),
    ctime: b.readInt32BE(at + 16) * 0x1_0000_0000 + b.readUInt32BE(at + 20),
    mtime: b.readInt32BE(at + 24) * 0x1_0000_0000 + b.readUInt32BE(at + 28),
    version: b.readInt32BE(at + 32),
    cversion: b.readInt32BE(at + 36),
    aversion: b.readInt32BE(at + 40),
    ephemeralOwner: long(b, at + 44, lastOwner),
    dataLength: b.readInt32BE(at + 52),
    numChildren: b.readInt32BE(at + 56),
    pzxid: long(b, at + 60, lastZxid),
  };
}

/** Create2Response. */
export function readCreate2Response(r: JuteReader): { path: string; stat: Stat } {
  const path = r.string();
  return { path, stat: readStat(r) };
}

/** GetDataResponse. */
export function readGetDataResponse(r: JuteReader): { data: Buffer; stat: Stat } {
  const data = r.buffer();
  return { data, stat: readStat(r) };
}

/** GetChildren2Response. */
export function readGetChildren2Response(r: JuteReader): { children: string[]; stat: Stat } {
  // A count that cannot fit in what is left fails before anything is allocated.
  const n = r.count(4);
  const children = new Array<string>(n);
  for (let i = 0; i < n; i++) children[i] = r.string();
  return { children, stat: readStat(r) };
}
