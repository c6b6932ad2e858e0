/**
 * Jute, ZooKeeper's binary record encoding: big-endian ints and longs, one-byte booleans, buffers
 * and UTF-8 strings prefixed by an int length (-1 for null), vectors prefixed by an int count.
 * Records carry no framing: a record is its fields one after the other.
 *
 * Records are plain data described by a schema (a list of typed fields); one generic reader and
 * one generic writer handle them all. A reader never reads past the end of its frame: a length or
 * count that does not fit is a ProtocolError ('malformed'), never a crash or a huge allocation.
 */
import { ProtocolError } from './ProtocolError';

/**
 * The type of one field:
 * - 'int' (32-bit), 'long' (64-bit, as a bigint), 'time' (a long read as a number: milliseconds),
 *   'bool', 'buffer', 'string';
 * - 'trailingBool': a bool at the very end of a record that older servers leave out; read as
 *   false when absent (the readOnly flag of ConnectResponse);
 * - a record schema, or `{ vector: type }`.
 */
export type FieldType = 'int' | 'long' | 'time' | 'bool' | 'trailingBool' | 'buffer' | 'string' | Schema<unknown> | { readonly vector: FieldType };

/** A record type: its name (for error messages) and its fields, in wire order. */
export interface Schema<T> {
  readonly name: string;
  readonly fields: ReadonlyArray<readonly [string, FieldType]>;
  /** Reads one record. Throws ProtocolError when the bytes do not fit. */
  read(r: JuteReader): T;
  /** Appends one record. */
  write(w: JuteWriter, value: T): void;
}

/** Reads jute values from one frame, checking every length against the bytes left. */
export class JuteReader {
  private pos: number;

  constructor(
    /** The frame; hand-written decoders (codec.ts) read it directly at offsets `take` gives them. */
    readonly buf: Buffer,
    offset = 0,
    private readonly end = buf.length,
  ) {
    this.pos = offset;
  }

  /** Bytes left in the frame. */
  get remaining(): number {
    return this.end - this.pos;
  }

  /** Moves past `n` bytes and returns where they start; throws ProtocolError ('malformed') when fewer are left. */
  take(n: number, what: string): number {
    const at = this.pos;
    if (n > this.end - at) throw new ProtocolError('malformed', `${what} needs ${n} bytes at offset ${at}, the frame has ${this.end - at} left`);
    this.pos = at + n;
    return at;
  }

  int(): number {
    return this.buf.readInt32BE(this.take(4, 'an int'));
  }

  long(): bigint {
    return this.buf.readBigInt64BE(this.take(8, 'a long'));
  }

  /** A long that holds milliseconds (ctime, mtime): exact as a number for any real date. */
  time(): number {
    const at = this.take(8, 'a long');
    return this.buf.readInt32BE(at) * 0x1_0000_0000 + this.buf.readUInt32BE(at + 4);
  }

  bool(): boolean {
    return this.buf[this.take(1, 'a bool')] !== 0;
  }

  /** A length prefix: -1 means null, anything else must fit in what is left. */
  private length(what: string, minItemBytes: number): number {
    const n = this.int();
    if (n < -1) throw new ProtocolError('malformed', `${what} has a negative length ${n}`);
    if (n > 0 && n * minItemBytes > this.remaining) {
      throw new ProtocolError('malformed', `${what} of ${n} cannot fit in the ${this.remaining} bytes left`);
    }
    return n;
  }

  /** A buffer; null (-1) reads as an empty buffer. A copy, so the frame can be freed. */
  buffer(): Buffer {
    const n = this.length('a buffer', 1);
    if (n <= 0) return Buffer.alloc(0);
    const at = this.take(n, 'a buffer');
    return Buffer.from(this.buf.subarray(at, at + n));
  }

  /** A UTF-8 string; null (-1) reads as ''. */
  string(): string {
    const n = this.length('a string', 1);
    if (n <= 0) return '';
    const at = this.take(n, 'a string');
    return this.buf.toString('utf8', at, at + n);
  }

  /** A vector's count; null (-1) reads as 0. Each item is at least `minItemBytes` long. */
  count(minItemBytes: number): number {
    return Math.max(0, this.length('a vector', minItemBytes));
  }
}

/** Appends jute values to a growing buffer. */
export class JuteWriter {
  private buf: Buffer;
  private pos: number;

  /** `reserve` bytes at the start are left for the caller to fill in (a frame's length and header). */
  constructor(reserve = 0, initialBytes = 256) {
    this.buf = Buffer.allocUnsafe(Math.max(initialBytes, reserve));
    this.pos = reserve;
  }

  get length(): number {
    return this.pos;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  int(v: number): void {
    this.ensure(4);
    this.pos = this.buf.writeInt32BE(v, this.pos);
  }

  long(v: bigint | number): void {
    this.ensure(8);
    this.pos = this.buf.writeBigInt64BE(typeof v === 'bigint' ? v : BigInt(v), this.pos);
  }

  bool(v: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
  }

  buffer(v: Buffer | Uint8Array): void {
    this.ensure(4 + v.length);
    this.pos = this.buf.writeInt32BE(v.length, this.pos);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }

  string(v: string): void {
    // At most 3 bytes per UTF-16 unit: write first, then the length in front.
    this.ensure(4 + v.length * 3);
    const n = this.buf.write(v, this.pos + 4, 'utf8');
    this.buf.writeInt32BE(n, this.pos);
    this.pos += 4 + n;
  }

  /** The bytes written, reserved ones included (shares memory with the writer). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/** The fewest bytes a value of this type takes on the wire. */
function minimumBytes(type: FieldType): number {
  switch (type) {
    case 'int':
    case 'buffer':
    case 'string':
      return 4;
    case 'long':
    case 'time':
      return 8;
    case 'bool':
      return 1;
    case 'trailingBool':
      return 0;
    default:
      if ('vector' in type) return 4;
      return type.fields.reduce((sum, [, t]) => sum + minimumBytes(t), 0);
  }
}

function readerFor(type: FieldType): (r: JuteReader) => unknown {
  switch (type) {
    case 'int':
      return (r) => r.int();
    case 'long':
      return (r) => r.long();
    case 'time':
      return (r) => r.time();
    case 'bool':
      return (r) => r.bool();
    case 'trailingBool':
      return (r) => r.remaining > 0 && r.bool();
    case 'buffer':
      return (r) => r.buffer();
    case 'string':
      return (r) => r.string();
    default:
      if ('vector' in type) {
        const item = readerFor(type.vector);
        // A count that cannot fit in what is left fails before anything is allocated.
        const minBytes = Math.max(1, minimumBytes(type.vector));
        return (r) => {
          const n = r.count(minBytes);
          const items = new Array<unknown>(n);
          for (let i = 0; i < n; i++) items[i] = item(r);
          return items;
        };
      }
      return (r) => type.read(r);
  }
}

function writerFor(type: FieldType): (w: JuteWriter, v: unknown) => void {
  switch (type) {
    case 'int':
      return (w, v) => w.int(v as number);
    case 'long':
    case 'time':
      return (w, v) => w.long(v as bigint | number);
    case 'bool':
    case 'trailingBool':
      return (w, v) => w.bool(v as boolean);
    case 'buffer':
      return (w, v) => w.buffer(v as Buffer);
    case 'string':
      return (w, v) => w.string(v as string);
    default:
      if ('vector' in type) {
        const item = writerFor(type.vector);
        return (w, v) => {
          const items = v as readonly unknown[];
          w.int(items.length);
          for (const x of items) item(w, x);
        };
      }
      return (w, v) => type.write(w, v);
  }
}

/**
 * Defines a record type. Field names are those of the plain objects that hold the record (they
 * follow zk-recipes' types where those differ from zookeeper.jute's); the order and the types are
 * the wire's.
 */
export function record<T>(name: string, fields: ReadonlyArray<readonly [keyof T & string, FieldType]>): Schema<T> {
  const readers = fields.map(([field, type]) => [field, readerFor(type)] as const);
  const writers = fields.map(([field, type]) => [field, writerFor(type)] as const);
  return Object.freeze({
    name,
    fields,
    read(r: JuteReader): T {
      const value: Record<string, unknown> = {};
      for (const [field, read] of readers) value[field] = read(r);
      return value as T;
    },
    write(w: JuteWriter, value: T): void {
      for (const [field, write] of writers) write(w, (value as Record<string, unknown>)[field]);
    },
  });
}
