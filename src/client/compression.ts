/** Node data compression: Curator's CompressionProvider, and its gzip provider on node:zlib. */
import { promisify } from 'node:util';
import { constants, gunzip, gzip } from 'node:zlib';
import { CompressionError, InvalidArgumentError } from '../errors';
import { describeValue, validateBoolean } from '../validate';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/**
 * Compresses node data on its way to the server and decompresses it on its way back, as Curator's
 * `CompressionProvider`: the client's `compression` option. Used by the writes and reads made with
 * `compressed: true` (Curator's `.compressed()` and, on getData, `.decompressed()`), and by every
 * create, setData and getData with the client's `enableCompression`.
 *
 * Either method may return the bytes or a promise of them. A throw or a rejection reaches the
 * caller as a CompressionError whose `cause` is the provider's error.
 */
export interface CompressionProvider {
  /** The bytes to store for `data`, written at `path` (relative to the client's namespace). */
  compress(path: string, data: Buffer): Buffer | Uint8Array | Promise<Buffer | Uint8Array>;
  /** The data that `compressed`, read at `path` (relative to the client's namespace), stands for. */
  decompress(path: string, compressed: Buffer): Buffer | Uint8Array | Promise<Buffer | Uint8Array>;
}

/** Options of {@link GzipCompressionProvider}. */
export interface GzipCompressionProviderOptions {
  /** zlib's compression level, from 0 (none) to 9; default -1, zlib's default (6), which is also what Curator uses. */
  level?: number;
}

/**
 * Byte 9 of a gzip header names the system that wrote it. java.util.zip (and so Curator) writes 0;
 * zlib writes 3 (Unix). Readers ignore it: it is set only so that our header is Curator's, byte
 * for byte.
 */
const GZIP_OS_BYTE = 9;

/**
 * Curator's default provider, `GzipCompressionProvider`, on node:zlib: the data is one gzip member
 * as java.util.zip writes it (the same 10-byte header, a deflate stream at zlib's default level,
 * the CRC-32 and length trailer), so Curator reads what it writes and it reads what Curator
 * writes. The work runs on libuv's thread pool, not on the event loop.
 *
 * Reading, empty data decompresses to empty data: no compressor writes zero bytes (Curator
 * compresses empty data to 20), and a node created without data (a parent made by `createParents`,
 * a recipe's container) should not fail every read made with the client's `enableCompression`.
 * Curator 5.4 rejects it ("Too short GZipped data"). Any other data that is not gzip rejects.
 */
export class GzipCompressionProvider implements CompressionProvider {
  private readonly level: number;

  constructor(options: GzipCompressionProviderOptions = {}) {
    if (options === null || typeof options !== 'object') throw new InvalidArgumentError(`options must be an object, got ${describeValue(options)}`);
    const level = options.level ?? constants.Z_DEFAULT_COMPRESSION;
    if (!Number.isInteger(level) || level < -1 || level > 9) throw new InvalidArgumentError(`level must be an integer from -1 to 9, got ${describeValue(level)}`);
    this.level = level;
  }

  /** One gzip member of `data`, with java.util.zip's header. */
  async compress(_path: string, data: Buffer): Promise<Buffer> {
    const out = await gzipAsync(data, { level: this.level });
    out[GZIP_OS_BYTE] = 0;
    return out;
  }

  /** The data of a gzip member; empty for empty data. Rejects with zlib's error for anything else that is not gzip. */
  async decompress(_path: string, compressed: Buffer): Promise<Buffer> {
    if (compressed.length === 0) return compressed;
    return gunzipAsync(compressed);
  }
}

/** The provider a client has unless told otherwise: one instance serves every client, as it keeps no state. */
export const DEFAULT_COMPRESSION_PROVIDER: CompressionProvider = Object.freeze(new GzipCompressionProvider());

/** Checks a `compression` option. */
export function validateCompressionProvider(provider: unknown): CompressionProvider {
  const p = provider as Partial<CompressionProvider> | null;
  if (p === null || typeof p !== 'object' || typeof p.compress !== 'function' || typeof p.decompress !== 'function') {
    throw new InvalidArgumentError(`compression must be a CompressionProvider, an object with compress(path, data) and decompress(path, data) methods, got ${describeValue(provider)}`);
  }
  return p as CompressionProvider;
}

/** Whether an operation's data is compressed: its own `compressed` flag if given, else `enabled` (the client's `enableCompression`). */
export function compressionWanted(flag: unknown, enabled: boolean): boolean {
  return flag === undefined ? enabled : validateBoolean(flag, 'compressed');
}

/** Compresses data for a write at `path`; a provider's failure becomes a CompressionError. */
export async function compressData(provider: CompressionProvider, path: string, data: Buffer): Promise<Buffer> {
  try {
    return toBuffer(await provider.compress(path, data));
  } catch (err) {
    throw new CompressionError('compress', `the data for ${path} could not be compressed: ${(err as Error)?.message ?? String(err)}`, { path, cause: err });
  }
}

/** Decompresses data read at `path`; data the provider cannot read becomes a CompressionError. */
export async function decompressData(provider: CompressionProvider, path: string, data: Buffer): Promise<Buffer> {
  try {
    return toBuffer(await provider.decompress(path, data));
  } catch (err) {
    throw new CompressionError('decompress', `the data of ${path} (${data.length} bytes) is not compressed data the client can read: ${(err as Error)?.message ?? String(err)}`, {
      path,
      cause: err,
    });
  }
}

function toBuffer(bytes: unknown): Buffer {
  if (Buffer.isBuffer(bytes)) return bytes;
  if (bytes instanceof Uint8Array) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  throw new TypeError(`the compression provider returned ${describeValue(bytes)}, not a Buffer or a Uint8Array`);
}
