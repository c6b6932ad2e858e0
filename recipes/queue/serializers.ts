/**
 * How queue items become node data. Two layers, as in Curator: a {@link QueueSerializer} turns
 * one item into bytes and back (Curator's QueueSerializer), and a {@link MultiItemSerializer}
 * frames one or more items in a node (Curator's ItemSerializer does it with
 * {@link curatorItemSerializer}).
 */
import { describeValue } from '../../src/recipeKit';
import { QueueSerializationError } from './errors';

/** Turns one item into bytes and back: Curator's QueueSerializer. */
export interface QueueSerializer<T> {
  serialize(item: T): Buffer | Uint8Array;
  deserialize(bytes: Buffer): T;
}

/**
 * A serializer that can also put several items in one node, for `putMulti`. The queues use
 * `serializeItems([item])` for a single put, so every node they write has the same framing.
 */
export interface MultiItemSerializer<T> extends QueueSerializer<T> {
  serializeItems(items: readonly T[]): Buffer;
  deserializeItems(bytes: Buffer): T[];
}

/** Whether `s` frames several items per node (see {@link MultiItemSerializer}). */
export function isMultiItemSerializer<T>(s: QueueSerializer<T>): s is MultiItemSerializer<T> {
  const m = s as Partial<MultiItemSerializer<T>>;
  return typeof m.serializeItems === 'function' && typeof m.deserializeItems === 'function';
}

/** The version word that starts every node Curator's ItemSerializer writes. */
export const CURATOR_ITEM_FORMAT_VERSION = 0x00010001;
const ITEM_OPCODE = 0x01;
const EOF_OPCODE = 0x02;

/**
 * Items as JSON text in UTF-8. `serialize` throws QueueSerializationError for what JSON cannot
 * carry and would otherwise lose or break on: a BigInt, a circular object, and a top-level
 * `undefined`, function or symbol (which `JSON.stringify` turns into nothing). Like
 * `JSON.stringify`, it drops `undefined` and function members of objects, and turns a Date into its
 * ISO string: what is read back is what `JSON.parse` makes of it.
 */
export function jsonSerializer<T = unknown>(): QueueSerializer<T> {
  return {
    serialize(item: T): Buffer {
      let text: string | undefined;
      try {
        text = JSON.stringify(item);
      } catch (err) {
        // BigInt: "Do not know how to serialize a BigInt"; cycles: "Converting circular structure to JSON".
        throw new QueueSerializationError(`the item cannot be written as JSON: ${(err as Error).message}`, { cause: err });
      }
      if (text === undefined) throw new QueueSerializationError(`the item cannot be written as JSON: got ${describeValue(item)}`);
      return Buffer.from(text, 'utf8');
    },
    deserialize(bytes: Buffer): T {
      try {
        return JSON.parse(bytes.toString('utf8')) as T;
      } catch (err) {
        throw new QueueSerializationError(`an item is not valid JSON: ${(err as Error).message}`, { cause: err });
      }
    },
  };
}

/** Strings as UTF-8 bytes: what a Java QueueSerializer<String> using `getBytes(UTF_8)` writes. */
export const utf8Serializer: QueueSerializer<string> = Object.freeze({
  serialize(item: string): Buffer {
    if (typeof item !== 'string') throw new QueueSerializationError(`utf8Serializer takes strings, got ${describeValue(item)}`);
    return Buffer.from(item, 'utf8');
  },
  deserialize(bytes: Buffer): string {
    return bytes.toString('utf8');
  },
});

/** Bytes as they are. */
export const bytesSerializer: QueueSerializer<Buffer> = Object.freeze({
  serialize(item: Buffer): Buffer {
    const bytes: unknown = item;
    if (!(bytes instanceof Uint8Array)) throw new QueueSerializationError(`bytesSerializer takes a Buffer or Uint8Array, got ${describeValue(bytes)}`);
    return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  },
  deserialize(bytes: Buffer): Buffer {
    return bytes;
  },
});

/** Calls `inner.serialize` and checks that it gave bytes. */
function itemBytes<T>(inner: QueueSerializer<T>, item: T): Buffer {
  let bytes: unknown;
  try {
    bytes = inner.serialize(item);
  } catch (err) {
    if (err instanceof QueueSerializationError) throw err;
    throw new QueueSerializationError(`the serializer failed on an item: ${(err as Error)?.message ?? String(err)}`, { cause: err });
  }
  if (!(bytes instanceof Uint8Array)) throw new QueueSerializationError(`a serializer must return a Buffer or Uint8Array, got ${describeValue(bytes)}`);
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Calls `inner.deserialize`, wrapping its failure. */
function itemValue<T>(inner: QueueSerializer<T>, bytes: Buffer): T {
  try {
    return inner.deserialize(bytes);
  } catch (err) {
    if (err instanceof QueueSerializationError) throw err;
    throw new QueueSerializationError(`the serializer failed on an item: ${(err as Error)?.message ?? String(err)}`, { cause: err });
  }
}

/**
 * Curator's ItemSerializer framing around an item serializer, so that nodes are read and written
 * exactly as Curator's DistributedQueue (and its priority, delay and id variants) reads and writes
 * them: a big-endian int32 `0x00010001`, then for each item the byte `0x01`, its length as a
 * big-endian int32 and its bytes, and the byte `0x02` at the end. A single put writes one item;
 * `putMulti` writes all its items into one node.
 *
 * `deserializeItems` throws QueueSerializationError on a wrong version word, an unknown opcode, a
 * negative length or bytes that end too soon. Like Curator, it ignores bytes after the end byte.
 * `deserialize` (one item) also throws when the node does not hold exactly one item.
 *
 * @example
 * ```ts
 * // Items a Java service puts with a QueueSerializer<String> that writes UTF-8:
 * const queue = new DistributedQueue(client, '/jobs', { serializer: curatorItemSerializer(utf8Serializer) });
 * ```
 */
export function curatorItemSerializer<T>(inner: QueueSerializer<T>): MultiItemSerializer<T> {
  if (inner === null || typeof inner !== 'object' || typeof inner.serialize !== 'function' || typeof inner.deserialize !== 'function') {
    throw new QueueSerializationError(`curatorItemSerializer needs a { serialize, deserialize } serializer, got ${describeValue(inner)}`);
  }
  const serializeItems = (items: readonly T[]): Buffer => {
    const parts: Buffer[] = [];
    const version = Buffer.alloc(4);
    version.writeInt32BE(CURATOR_ITEM_FORMAT_VERSION);
    parts.push(version);
    for (const item of items) {
      const bytes = itemBytes(inner, item);
      const head = Buffer.alloc(5);
      head.writeUInt8(ITEM_OPCODE, 0);
      head.writeInt32BE(bytes.length, 1);
      parts.push(head, bytes);
    }
    parts.push(Buffer.from([EOF_OPCODE]));
    return Buffer.concat(parts);
  };
  const deserializeItems = (bytes: Buffer): T[] => {
    const fail = (why: string): never => {
      throw new QueueSerializationError(`not a Curator queue item (${bytes.length} bytes): ${why}`);
    };
    if (bytes.length < 4) fail('shorter than the version word');
    const version = bytes.readInt32BE(0);
    if (version !== CURATOR_ITEM_FORMAT_VERSION) fail(`version 0x${(version >>> 0).toString(16).padStart(8, '0')}, expected 0x00010001`);
    const items: T[] = [];
    let at = 4;
    for (;;) {
      if (at >= bytes.length) fail('no end byte');
      const opcode = bytes[at];
      at += 1;
      if (opcode === EOF_OPCODE) return items;
      if (opcode !== ITEM_OPCODE) fail(`opcode ${opcode} at byte ${at - 1}, expected 1 or 2`);
      if (at + 4 > bytes.length) fail('an item length is cut short');
      const size = bytes.readInt32BE(at);
      at += 4;
      if (size < 0) fail(`negative item length ${size}`);
      if (at + size > bytes.length) fail(`an item of ${size} bytes is cut short`);
      items.push(itemValue(inner, bytes.subarray(at, at + size)));
      at += size;
    }
  };
  return Object.freeze({
    serializeItems,
    deserializeItems,
    serialize: (item: T) => serializeItems([item]),
    deserialize: (bytes: Buffer): T => {
      const items = deserializeItems(bytes);
      if (items.length !== 1) throw new QueueSerializationError(`expected one item in the node, found ${items.length}`);
      return items[0];
    },
  });
}

/** Node data for `items`, through `serializer`'s framing, or as the single item's bytes. */
export function encodeNode<T>(serializer: QueueSerializer<T>, items: readonly T[]): Buffer {
  if (isMultiItemSerializer(serializer)) {
    try {
      return serializer.serializeItems(items);
    } catch (err) {
      if (err instanceof QueueSerializationError) throw err;
      throw new QueueSerializationError(`the serializer failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }
  }
  if (items.length !== 1) {
    throw new QueueSerializationError(
      `${items.length} items in one node need a serializer that frames them, such as curatorItemSerializer(…); this one holds one item per node`,
    );
  }
  return itemBytes(serializer, items[0]);
}

/** The items of a node's data, through `serializer`'s framing, or as one item. */
export function decodeNode<T>(serializer: QueueSerializer<T>, bytes: Buffer): T[] {
  if (isMultiItemSerializer(serializer)) {
    try {
      return serializer.deserializeItems(bytes);
    } catch (err) {
      if (err instanceof QueueSerializationError) throw err;
      throw new QueueSerializationError(`the serializer failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }
  }
  return [itemValue(serializer, bytes)];
}

/** The default: Curator's framing around JSON items, so a Java consumer with a JSON QueueSerializer reads them. */
export function defaultSerializer<T>(): MultiItemSerializer<T> {
  return curatorItemSerializer(jsonSerializer<T>());
}
