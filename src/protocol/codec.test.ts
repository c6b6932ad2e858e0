/**
 * The hand-written codecs against the schema records they stand for: on many random values, the
 * same bytes written, the same values (and the same field order) read, and the same error on a
 * frame cut short. The schema records are the reference (jute.test.ts, golden.test.ts); this keeps
 * the two from drifting apart.
 */
import * as fc from 'fast-check';
import type { ACL } from '../transport/Transport';
import {
  encodeCreate,
  encodePathVersion,
  encodePathWatch,
  encodeSetData,
  readCreate2Response,
  readGetChildren2Response,
  readGetDataResponse,
  readReplyHeader,
  readStat,
  readWatcherEvent,
} from './codec';
import { JuteReader, JuteWriter, type Schema } from './jute';
import { OpCode } from './opcodes';
import { ProtocolError } from './ProtocolError';
import {
  Create2ResponseRecord,
  CreateRequestRecord,
  GetChildren2ResponseRecord,
  GetDataResponseRecord,
  PathVersionRecord,
  PathWatchRecord,
  ReplyHeaderRecord,
  SetDataRequestRecord,
  StatRecord,
  StatResponseRecord,
  WatcherEventRecord,
} from './records';
import { frame } from './requests';

const RUNS = 200;

const int = fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff });
/** Longs of every size: small ones (zxids, zero), session-id-like ones, the extremes and the edges of exact numbers (2^53). */
const long = fc.oneof(
  fc.constant(0n),
  fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  fc.bigInt({ min: 2n ** 53n - 2n ** 33n, max: 2n ** 53n + 2n ** 33n }),
  fc.bigInt({ min: -(2n ** 53n) - 2n ** 33n, max: -(2n ** 53n) + 2n ** 33n }),
  fc.constantFrom(-(2n ** 63n), 2n ** 63n - 1n, -1n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n + 1n, -(2n ** 53n) - 1n),
);
const time = fc.maxSafeInteger();
/** Any UTF-16 text, lone surrogates included (written as U+FFFD, three bytes, by both). */
const text = fc.string({
  unit: fc.oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
  ),
  maxLength: 30,
});
const data = fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a));
const acl: fc.Arbitrary<ACL[]> = fc.array(fc.record({ perms: int, scheme: text, id: text }), { maxLength: 4 });
const stat = fc.record({
  czxid: long,
  mzxid: long,
  ctime: time,
  mtime: time,
  version: int,
  cversion: int,
  aversion: int,
  ephemeralOwner: long,
  dataLength: int,
  numChildren: int,
  pzxid: long,
});

function schemaBytes<T>(schema: Schema<T>, value: T): Buffer {
  const w = new JuteWriter(0, 8);
  schema.write(w, value);
  return Buffer.from(w.bytes());
}

/** Frames as the schema records would: what the requests were before codec.ts. */
function schemaFrame<T>(opcode: number, schema: Schema<T>, value: T): Buffer {
  return Buffer.from(frame(opcode, 0, (w) => schema.write(w, value)));
}

function kindOfFailure(read: () => unknown): string {
  try {
    read();
  } catch (err) {
    return err instanceof ProtocolError ? err.kind : String(err);
  }
  return 'no failure';
}

/**
 * Reads `bytes` both ways and expects the same value, the same field order, every byte read, and
 * the same kind of error on every shorter frame.
 */
function readsAlike<T>(schema: Schema<T>, read: (r: JuteReader) => unknown, bytes: Buffer, pick: (value: T) => unknown = (v) => v): void {
  const byHand = new JuteReader(bytes);
  const bySchema = new JuteReader(bytes);
  const hand = read(byHand);
  const expected = pick(schema.read(bySchema));
  expect(hand).toEqual(expected);
  expect(JSON.stringify(hand, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))).toBe(
    JSON.stringify(expected, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)),
  );
  expect(byHand.remaining).toBe(0);
  // Some 16 cuts along the frame, and the last byte missing.
  const step = Math.max(1, Math.floor(bytes.length / 16));
  const cuts = new Set<number>([bytes.length - 1]);
  for (let cut = 0; cut < bytes.length; cut += step) cuts.add(cut);
  for (const cut of cuts) {
    expect(kindOfFailure(() => read(new JuteReader(bytes.subarray(0, cut))))).toBe('malformed');
    expect(kindOfFailure(() => schema.read(new JuteReader(bytes.subarray(0, cut))))).toBe('malformed');
  }
}

describe('hand-written requests write what their schema records write', () => {
  it('CreateRequest (create, create2, createContainer)', () => {
    fc.assert(
      fc.property(fc.constantFrom(OpCode.create, OpCode.create2, OpCode.createContainer), text, data, acl, int, (opcode, path, bytes, entries, flags) => {
        const hand = encodeCreate(opcode, path, bytes, entries, flags);
        expect(hand.toString('hex')).toBe(schemaFrame(opcode, CreateRequestRecord, { path, data: bytes, acl: entries, flags }).toString('hex'));
        // Exactly its size: one allocation, nothing left over.
        expect(hand.readInt32BE(0)).toBe(hand.length - 4);
      }),
      { numRuns: RUNS },
    );
  });

  it('exists, getData and getChildren2 (PathWatchRequest)', () => {
    fc.assert(
      fc.property(fc.constantFrom(OpCode.exists, OpCode.getData, OpCode.getChildren2), text, fc.boolean(), (opcode, path, watch) => {
        const hand = encodePathWatch(opcode, path, watch);
        expect(hand.toString('hex')).toBe(schemaFrame(opcode, PathWatchRecord, { path, watch }).toString('hex'));
        expect(hand.readInt32BE(0)).toBe(hand.length - 4);
      }),
      { numRuns: RUNS },
    );
  });

  it('delete (PathVersionRequest)', () => {
    fc.assert(
      fc.property(text, int, (path, version) => {
        const hand = encodePathVersion(OpCode.delete, path, version);
        expect(hand.toString('hex')).toBe(schemaFrame(OpCode.delete, PathVersionRecord, { path, version }).toString('hex'));
        expect(hand.readInt32BE(0)).toBe(hand.length - 4);
      }),
      { numRuns: RUNS },
    );
  });

  it('SetDataRequest', () => {
    fc.assert(
      fc.property(text, data, int, (path, bytes, version) => {
        const hand = encodeSetData(OpCode.setData, path, bytes, version);
        expect(hand.toString('hex')).toBe(schemaFrame(OpCode.setData, SetDataRequestRecord, { path, data: bytes, version }).toString('hex'));
        expect(hand.readInt32BE(0)).toBe(hand.length - 4);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('hand-written replies read what their schema records read', () => {
  it('ReplyHeader', () => {
    fc.assert(
      fc.property(int, long, int, (xid, zxid, err) => {
        readsAlike(ReplyHeaderRecord, readReplyHeader, schemaBytes(ReplyHeaderRecord, { xid, zxid, err }));
      }),
      { numRuns: RUNS },
    );
  });

  it('WatcherEvent', () => {
    fc.assert(
      fc.property(int, int, text, (type, state, path) => {
        readsAlike(WatcherEventRecord, readWatcherEvent, schemaBytes(WatcherEventRecord, { type, state, path }));
      }),
      { numRuns: RUNS },
    );
  });

  it('Stat, and the replies that are a Stat (exists, setData)', () => {
    fc.assert(
      fc.property(stat, (s) => {
        readsAlike(StatRecord, readStat, schemaBytes(StatRecord, s));
        readsAlike(StatResponseRecord, readStat, schemaBytes(StatResponseRecord, { stat: s }), (v) => v.stat);
      }),
      { numRuns: RUNS },
    );
  });

  it('Create2Response', () => {
    fc.assert(
      fc.property(text, stat, (path, s) => {
        readsAlike(Create2ResponseRecord, readCreate2Response, schemaBytes(Create2ResponseRecord, { path, stat: s }));
      }),
      { numRuns: RUNS },
    );
  });

  it('GetDataResponse', () => {
    fc.assert(
      fc.property(data, stat, (bytes, s) => {
        readsAlike(GetDataResponseRecord, readGetDataResponse, schemaBytes(GetDataResponseRecord, { data: bytes, stat: s }));
      }),
      { numRuns: RUNS },
    );
  });

  it('GetChildren2Response', () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 8 }), stat, (children, s) => {
        readsAlike(GetChildren2ResponseRecord, readGetChildren2Response, schemaBytes(GetChildren2ResponseRecord, { children, stat: s }));
      }),
      { numRuns: RUNS },
    );
  });

  it('reads null strings, buffers and vectors (length -1) as the schema does', () => {
    const nulls = Buffer.concat([Buffer.from('ffffffff', 'hex'), schemaBytes(StatRecord, { czxid: 1n, mzxid: 2n, ctime: 3, mtime: 4, version: 5, cversion: 6, aversion: 7, ephemeralOwner: 8n, dataLength: 9, numChildren: 10, pzxid: 11n })]);
    readsAlike(Create2ResponseRecord, readCreate2Response, nulls);
    readsAlike(GetDataResponseRecord, readGetDataResponse, nulls);
    readsAlike(GetChildren2ResponseRecord, readGetChildren2Response, nulls);
  });

  it('refuses a listing whose count cannot fit before allocating, as the schema does', () => {
    const huge = Buffer.from('7fffffff', 'hex');
    expect(() => readGetChildren2Response(new JuteReader(huge))).toThrow(/cannot fit/);
    expect(() => readGetChildren2Response(new JuteReader(Buffer.from('fffffffe', 'hex')))).toThrow(/negative length/);
  });

  it('copies the data out of the frame', () => {
    const bytes = schemaBytes(GetDataResponseRecord, { data: Buffer.from('abc'), stat: { czxid: 1n, mzxid: 2n, ctime: 3, mtime: 4, version: 5, cversion: 6, aversion: 7, ephemeralOwner: 8n, dataLength: 3, numChildren: 0, pzxid: 11n } });
    const { data: read } = readGetDataResponse(new JuteReader(bytes));
    bytes.fill(0);
    expect(read.toString()).toBe('abc');
  });
});
