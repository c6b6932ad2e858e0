import { gunzipSync, gzipSync } from 'node:zlib';
import { CompressionError, InvalidArgumentError } from '../errors';
import { compressData, decompressData, GzipCompressionProvider, validateCompressionProvider } from './compression';

describe('GzipCompressionProvider', () => {
  const gzip = new GzipCompressionProvider();

  it("writes one gzip member with java.util.zip's header (OS byte 0), which zlib reads back", async () => {
    const data = Buffer.from('a'.repeat(1000));
    const out = await gzip.compress('/p', data);
    expect(out.subarray(0, 10)).toEqual(Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0]));
    expect(gunzipSync(out).equals(data)).toBe(true);
    expect((await gzip.decompress('/p', out)).equals(data)).toBe(true);
  });

  it('compresses empty data to the 20 bytes Curator writes for it, and reads empty data as empty', async () => {
    expect(await gzip.compress('/p', Buffer.alloc(0))).toEqual(Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
    expect((await gzip.decompress('/p', Buffer.alloc(0))).length).toBe(0);
  });

  it('reads gzip written by others (zlib with its own OS byte)', async () => {
    expect((await gzip.decompress('/p', gzipSync('from zlib'))).toString()).toBe('from zlib');
  });

  it('checks its level', () => {
    expect(() => new GzipCompressionProvider({ level: 10 })).toThrow(InvalidArgumentError);
    expect(() => new GzipCompressionProvider({ level: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => new GzipCompressionProvider({ level: 9 })).not.toThrow();
  });
});

describe('compressData and decompressData', () => {
  it('turn a provider failure or unreadable data into a CompressionError with the path and the cause', async () => {
    const gzip = new GzipCompressionProvider();
    const err = await decompressData(gzip, '/x', Buffer.from('plain')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CompressionError);
    expect(err).toMatchObject({ code: 'COMPRESSION_FAILED', operation: 'decompress', path: '/x' });
    expect((err as Error).cause).toMatchObject({ code: 'Z_DATA_ERROR' });
    const thrower = { compress: () => { throw new Error('boom'); }, decompress: (_p: string, d: Buffer) => d };
    await expect(compressData(thrower, '/y', Buffer.from('a'))).rejects.toMatchObject({ operation: 'compress', path: '/y' });
  });

  it('take a Uint8Array from a provider, and refuse anything else it returns', async () => {
    const u8 = { compress: () => new Uint8Array([1, 2]), decompress: () => 'text' as never };
    expect(await compressData(u8, '/p', Buffer.alloc(0))).toEqual(Buffer.from([1, 2]));
    await expect(decompressData(u8, '/p', Buffer.from([1]))).rejects.toBeInstanceOf(CompressionError);
  });

  it('validateCompressionProvider refuses what has not both methods', () => {
    expect(() => validateCompressionProvider({ compress: () => Buffer.alloc(0) })).toThrow(InvalidArgumentError);
    expect(() => validateCompressionProvider(null)).toThrow(InvalidArgumentError);
  });
});
