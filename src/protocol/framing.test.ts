import * as fc from 'fast-check';
import { DEFAULT_MAX_FRAME_BYTES, FrameDecoder } from './framing';
import { JuteReader } from './jute';
import { readMultiResults } from './multi';
import { ProtocolError } from './ProtocolError';
import { ConnectResponseRecord, GetChildren2ResponseRecord, GetDataResponseRecord, ReplyHeaderRecord, WatcherEventRecord } from './records';

function framed(bodies: readonly Buffer[]): Buffer {
  return Buffer.concat(
    bodies.flatMap((b) => {
      const length = Buffer.alloc(4);
      length.writeInt32BE(b.length);
      return [length, b];
    }),
  );
}

/** Cuts `bytes` at the given points (taken modulo its length), in order. */
function chunks(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => (bytes.length === 0 ? 0 : c % (bytes.length + 1))))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let at = 0;
  for (const p of points) {
    out.push(bytes.subarray(at, p));
    at = p;
  }
  out.push(bytes.subarray(at));
  return out;
}

function decodeAll(decoder: FrameDecoder, parts: readonly Buffer[]): Buffer[] {
  const frames: Buffer[] = [];
  for (const part of parts) decoder.push(part, (f) => frames.push(Buffer.from(f)));
  return frames;
}

const body = fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a));

describe('FrameDecoder', () => {
  it('gives back the frames that were sent, however the bytes are cut into chunks', () => {
    fc.assert(
      fc.property(fc.array(body, { maxLength: 10 }), fc.array(fc.nat(), { maxLength: 20 }), (bodies, cuts) => {
        const decoder = new FrameDecoder();
        expect(decodeAll(decoder, chunks(framed(bodies), cuts))).toEqual(bodies);
        expect(decoder.pending).toBe(0);
        expect(() => decoder.end()).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });

  it('finds a stream that ends inside a frame truncated, whatever the cut', () => {
    fc.assert(
      fc.property(fc.array(body, { minLength: 1, maxLength: 5 }), fc.nat(), fc.array(fc.nat(), { maxLength: 5 }), (bodies, cut, splits) => {
        const bytes = framed(bodies);
        const end = cut % bytes.length;
        const decoder = new FrameDecoder();
        const frames = decodeAll(decoder, chunks(bytes.subarray(0, end), splits));
        expect(bodies.slice(0, frames.length)).toEqual(frames);
        if (decoder.pending === 0) {
          // Cut right between two frames: nothing is missing.
          expect(() => decoder.end()).not.toThrow();
        } else {
          expect(() => decoder.end()).toThrow(expect.objectContaining({ name: 'ProtocolError', kind: 'truncated' }));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('throws only ProtocolErrors on random bytes, and never holds more than the limit', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 10 }), fc.integer({ min: 16, max: 512 }), (parts, max) => {
        const decoder = new FrameDecoder(max);
        try {
          for (const part of parts) {
            decoder.push(Buffer.from(part), (f) => expect(f.length).toBeLessThanOrEqual(max));
            expect(decoder.pending).toBeLessThanOrEqual(max + 4 + 64);
          }
          decoder.end();
        } catch (err) {
          expect(err).toBeInstanceOf(ProtocolError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a frame over the limit from its length alone, and a negative length', () => {
    const decoder = new FrameDecoder();
    const header = Buffer.alloc(4);
    header.writeInt32BE(DEFAULT_MAX_FRAME_BYTES + 1);
    expect(() => decoder.push(header, () => undefined)).toThrow(expect.objectContaining({ kind: 'frameTooLarge' }));
    header.writeInt32BE(-5);
    expect(() => new FrameDecoder().push(header, () => undefined)).toThrow(expect.objectContaining({ kind: 'malformed' }));
    // The limit holds when the length arrives a byte at a time too.
    const slow = new FrameDecoder(100);
    const big = Buffer.alloc(4);
    big.writeInt32BE(101);
    slow.push(big.subarray(0, 2), () => undefined);
    expect(() => slow.push(big.subarray(2), () => undefined)).toThrow(expect.objectContaining({ kind: 'frameTooLarge' }));
  });

  it('accepts a frame of exactly the limit', () => {
    const decoder = new FrameDecoder(1000);
    expect(decodeAll(decoder, [framed([Buffer.alloc(1000, 7)])])[0]).toEqual(Buffer.alloc(1000, 7));
  });
});

describe('decoding what the server sends, from random bytes', () => {
  // Every way the client reads a frame: the handshake's answer, then a reply header followed by
  // a notification or a reply body of any kind.
  const readers: Array<(r: JuteReader) => unknown> = [
    (r) => ConnectResponseRecord.read(r),
    (r) => [ReplyHeaderRecord.read(r), WatcherEventRecord.read(r)],
    (r) => [ReplyHeaderRecord.read(r), GetDataResponseRecord.read(r)],
    (r) => [ReplyHeaderRecord.read(r), GetChildren2ResponseRecord.read(r)],
    (r) => [ReplyHeaderRecord.read(r), readMultiResults(r, (p) => p)],
  ];

  it('gives typed errors only', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat({ max: readers.length - 1 }), (bytes, which) => {
        try {
          readers[which](new JuteReader(Buffer.from(bytes)));
        } catch (err) {
          expect(err).toBeInstanceOf(ProtocolError);
        }
      }),
      { numRuns: 5000 },
    );
  });
});
