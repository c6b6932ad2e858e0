import { InvalidArgumentError } from '../../src/errors';
import { QueueSerializationError } from './errors';
import {
  CURATOR_ITEM_FORMAT_VERSION,
  bytesSerializer,
  curatorItemSerializer,
  decodeNode,
  defaultSerializer,
  encodeNode,
  isMultiItemSerializer,
  jsonSerializer,
  utf8Serializer,
} from './serializers';

/** Curator's ItemSerializer bytes, built by hand from the format's description. */
function curatorBytes(...items: Buffer[]): Buffer {
  const parts: Buffer[] = [Buffer.from([0x00, 0x01, 0x00, 0x01])];
  for (const item of items) {
    const len = Buffer.alloc(4);
    len.writeInt32BE(item.length);
    parts.push(Buffer.from([0x01]), len, item);
  }
  parts.push(Buffer.from([0x02]));
  return Buffer.concat(parts);
}

describe('curatorItemSerializer', () => {
  const s = curatorItemSerializer(utf8Serializer);

  it('writes one item as Curator does: version, opcode 1, big-endian length, bytes, opcode 2', () => {
    expect(CURATOR_ITEM_FORMAT_VERSION).toBe(0x00010001);
    expect(s.serialize('héllo')).toEqual(curatorBytes(Buffer.from('héllo', 'utf8')));
    expect(s.serialize('héllo').toString('hex')).toBe('000100010100000006' + Buffer.from('héllo').toString('hex') + '02');
  });

  it('writes several items into one node, and reads them back in order', () => {
    const bytes = s.serializeItems(['a', '', 'ccc']);
    expect(bytes).toEqual(curatorBytes(Buffer.from('a'), Buffer.alloc(0), Buffer.from('ccc')));
    expect(s.deserializeItems(bytes)).toEqual(['a', '', 'ccc']);
    expect(s.serializeItems([])).toEqual(curatorBytes());
    expect(s.deserializeItems(curatorBytes())).toEqual([]);
  });

  it('reads a length above 255 as big-endian, and ignores bytes after the end byte as Curator does', () => {
    const long = 'x'.repeat(70_000);
    expect(s.deserialize(Buffer.concat([s.serialize(long), Buffer.from([9, 9])]))).toBe(long);
  });

  it.each([
    ['empty', Buffer.alloc(0), /shorter than the version/],
    ['a wrong version', Buffer.from([0, 1, 0, 2, 2]), /version 0x00010002/],
    ['no end byte', Buffer.from([0, 1, 0, 1]), /no end byte/],
    ['an unknown opcode', Buffer.from([0, 1, 0, 1, 7]), /opcode 7/],
    ['a cut length', Buffer.from([0, 1, 0, 1, 1, 0, 0]), /length is cut short/],
    ['a negative length', Buffer.from([0, 1, 0, 1, 1, 0xff, 0xff, 0xff, 0xff, 2]), /negative item length -1/],
    ['cut item bytes', Buffer.from([0, 1, 0, 1, 1, 0, 0, 0, 5, 65, 2]), /5 bytes is cut short/],
  ])('refuses %s with QueueSerializationError', (_what, bytes, message) => {
    expect(() => s.deserializeItems(bytes)).toThrow(QueueSerializationError);
    expect(() => s.deserializeItems(bytes)).toThrow(message);
  });

  it('deserialize (one item) refuses a node with several', () => {
    expect(() => s.deserialize(s.serializeItems(['a', 'b']))).toThrow(/expected one item in the node, found 2/);
  });

  it('wraps what the inner serializer throws, and refuses non-bytes from it', () => {
    const throwing = curatorItemSerializer<string>({
      serialize: () => {
        throw new Error('boom');
      },
      deserialize: () => {
        throw new Error('bang');
      },
    });
    expect(() => throwing.serialize('x')).toThrow(/the serializer failed on an item: boom/);
    expect(() => throwing.deserialize(curatorBytes(Buffer.from('x')))).toThrow(QueueSerializationError);
    const notBytes = curatorItemSerializer<string>({ serialize: () => 'text' as unknown as Buffer, deserialize: (b) => b.toString() });
    expect(() => notBytes.serialize('x')).toThrow(/must return a Buffer or Uint8Array, got "text"/);
    expect(() => curatorItemSerializer(undefined as never)).toThrow(QueueSerializationError);
  });
});

describe('jsonSerializer', () => {
  const json = jsonSerializer<unknown>();

  it('round-trips JSON values as UTF-8 text', () => {
    const value = { a: [1, 'é', null, true], b: { c: 2.5 } };
    expect(json.serialize(value).toString('utf8')).toBe(JSON.stringify(value));
    expect(json.deserialize(Buffer.from(JSON.stringify(value)))).toEqual(value);
  });

  it.each([
    ['a BigInt', 10n, /BigInt/],
    ['a BigInt inside an object', { n: 1n }, /BigInt/],
    ['a circular object', (() => {
      const o: Record<string, unknown> = {};
      o.self = o;
      return o;
    })(), /circular/],
    ['undefined', undefined, /got undefined/],
    ['a function', () => 1, /got a function/],
    ['a symbol', Symbol('s'), /got a symbol/],
  ])('refuses %s with QueueSerializationError', (_what, value, message) => {
    let caught: unknown;
    try {
      json.serialize(value);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(QueueSerializationError);
    expect((caught as QueueSerializationError).code).toBe('QUEUE_SERIALIZATION');
    expect((caught as Error).message).toMatch(message);
  });

  it('refuses bytes that are not JSON', () => {
    expect(() => json.deserialize(Buffer.from('{nope'))).toThrow(QueueSerializationError);
  });
});

describe('utf8Serializer and bytesSerializer', () => {
  it('carry strings and bytes as they are, and refuse other types', () => {
    expect(utf8Serializer.serialize('hé')).toEqual(Buffer.from('hé', 'utf8'));
    expect(utf8Serializer.deserialize(Buffer.from('hé', 'utf8'))).toBe('hé');
    expect(() => utf8Serializer.serialize(5 as unknown as string)).toThrow(QueueSerializationError);
    expect(bytesSerializer.serialize(new Uint8Array([1, 2]) as Buffer)).toEqual(Buffer.from([1, 2]));
    expect(() => bytesSerializer.serialize('x' as unknown as Buffer)).toThrow(QueueSerializationError);
  });
});

describe('node encoding', () => {
  it('the default frames JSON items in Curator format', () => {
    const s = defaultSerializer<{ n: number }>();
    expect(isMultiItemSerializer(s)).toBe(true);
    expect(encodeNode(s, [{ n: 1 }])).toEqual(curatorBytes(Buffer.from('{"n":1}')));
    expect(decodeNode(s, encodeNode(s, [{ n: 1 }, { n: 2 }]))).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('a serializer without framing holds one item per node, as its bytes', () => {
    expect(isMultiItemSerializer(utf8Serializer)).toBe(false);
    expect(encodeNode(utf8Serializer, ['abc'])).toEqual(Buffer.from('abc'));
    expect(decodeNode(utf8Serializer, Buffer.from('abc'))).toEqual(['abc']);
    expect(() => encodeNode(utf8Serializer, ['a', 'b'])).toThrow(/need a serializer that frames them/);
  });

  it('wraps a framing serializer that throws something else', () => {
    const odd = { ...curatorItemSerializer(utf8Serializer), serializeItems: () => { throw new InvalidArgumentError('odd'); } };
    expect(() => encodeNode(odd, ['a'])).toThrow(QueueSerializationError);
  });
});
