import * as fc from 'fast-check';
import { JuteReader, JuteWriter, record, type FieldType, type Schema } from './jute';
import { ProtocolError } from './ProtocolError';
import { ALL_RECORDS, ConnectResponseRecord, StatRecord } from './records';

/** Values of a field type, as the records hold them. */
function arbitraryOf(type: FieldType): fc.Arbitrary<unknown> {
  switch (type) {
    case 'int':
      return fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff });
    case 'long':
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    case 'time':
      return fc.maxSafeInteger();
    case 'bool':
    case 'trailingBool':
      return fc.boolean();
    case 'buffer':
      return fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a));
    case 'string':
      return fc.string({ unit: 'grapheme', maxLength: 20 });
    default:
      if ('vector' in type) return fc.array(arbitraryOf(type.vector), { maxLength: 5 });
      return fc.record(Object.fromEntries(type.fields.map(([name, t]) => [name, arbitraryOf(t)])));
  }
}

function encode<T>(schema: Schema<T>, value: T): Buffer {
  const w = new JuteWriter(0, 8);
  schema.write(w, value);
  return Buffer.from(w.bytes());
}

describe('jute records', () => {
  it.each(ALL_RECORDS.map((s) => [s.name, s] as const))('%s round-trips', (_name, schema) => {
    fc.assert(
      fc.property(arbitraryOf(schema), (value) => {
        const bytes = encode(schema, value);
        const r = new JuteReader(bytes);
        expect(schema.read(r)).toEqual(value);
        expect(r.remaining).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  it.each(ALL_RECORDS.map((s) => [s.name, s] as const))('%s cut short reads as a ProtocolError, never anything else', (_name, schema) => {
    fc.assert(
      fc.property(arbitraryOf(schema), fc.nat(), (value, cut) => {
        const bytes = encode(schema, value);
        if (bytes.length === 0) return;
        const at = cut % bytes.length;
        try {
          schema.read(new JuteReader(bytes.subarray(0, at)));
          // Only a record whose last field is optional can end early and still be whole.
          expect(schema.fields.at(-1)?.[1]).toBe('trailingBool');
          expect(at).toBe(bytes.length - 1);
        } catch (err) {
          expect(err).toBeInstanceOf(ProtocolError);
          expect((err as ProtocolError).kind).toBe('malformed');
        }
      }),
      { numRuns: 100 },
    );
  });

  it('writes the wire format: big-endian, length-prefixed, one-byte booleans', () => {
    const schema = record<{ i: number; l: bigint; b: boolean; s: string; d: Buffer; v: string[] }>('Sample', [
      ['i', 'int'],
      ['l', 'long'],
      ['b', 'bool'],
      ['s', 'string'],
      ['d', 'buffer'],
      ['v', { vector: 'string' }],
    ]);
    const bytes = encode(schema, { i: -2, l: 0x0102030405060708n, b: true, s: 'é', d: Buffer.from([9]), v: ['a', ''] });
    expect(bytes.toString('hex')).toBe(
      ['fffffffe', '0102030405060708', '01', '00000002c3a9', '0000000109', '00000002', '0000000161', '00000000'].join(''),
    );
  });

  it('reads null strings, buffers and vectors (length -1) as empty ones', () => {
    const schema = record<{ s: string; d: Buffer; v: string[] }>('Nulls', [
      ['s', 'string'],
      ['d', 'buffer'],
      ['v', { vector: 'string' }],
    ]);
    const bytes = Buffer.from('ffffffffffffffffffffffff', 'hex');
    expect(schema.read(new JuteReader(bytes))).toEqual({ s: '', d: Buffer.alloc(0), v: [] });
  });

  it('refuses lengths below -1 and counts that cannot fit, before allocating', () => {
    const vector = record<{ v: string[] }>('V', [['v', { vector: 'string' }]]);
    expect(() => vector.read(new JuteReader(Buffer.from('7fffffff', 'hex')))).toThrow(ProtocolError);
    expect(() => vector.read(new JuteReader(Buffer.from('fffffffe', 'hex')))).toThrow(/negative length/);
    const str = record<{ s: string }>('S', [['s', 'string']]);
    expect(() => str.read(new JuteReader(Buffer.from('00000010616263', 'hex')))).toThrow(/cannot fit/);
  });

  it('reads a ConnectResponse with or without the readOnly byte', () => {
    const full = encode(ConnectResponseRecord, { protocolVersion: 0, timeOut: 4000, sessionId: 7n, passwd: Buffer.alloc(16, 1), readOnly: true });
    expect(ConnectResponseRecord.read(new JuteReader(full)).readOnly).toBe(true);
    const old = full.subarray(0, full.length - 1);
    expect(ConnectResponseRecord.read(new JuteReader(old))).toEqual({ protocolVersion: 0, timeOut: 4000, sessionId: 7n, passwd: Buffer.alloc(16, 1), readOnly: false });
  });

  it('reads ctime and mtime as exact numbers, negative ones included', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }), (ms) => {
        const w = new JuteWriter();
        w.long(BigInt(ms));
        expect(new JuteReader(w.bytes()).time()).toBe(ms);
      }),
    );
  });

  it('copies buffers out of the frame, so a frame is not kept alive by what was read from it', () => {
    const stat = { czxid: 1n, mzxid: 2n, ctime: 3, mtime: 4, version: 5, cversion: 6, aversion: 7, ephemeralOwner: 8n, dataLength: 9, numChildren: 10, pzxid: 11n };
    const frame = Buffer.concat([Buffer.from('00000003616263', 'hex'), encode(StatRecord, stat)]);
    const r = new JuteReader(frame);
    const data = r.buffer();
    frame.fill(0);
    expect(data.toString()).toBe('abc');
  });
});
