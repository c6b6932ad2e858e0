import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { CompressionError, GzipCompressionProvider, InvalidArgumentError, MAX_DATA_BYTES, ZkClient, type CompressionProvider } from '../../src';
import { nextEvent, randomRoot } from '../helpers';
import { useZooKeeper } from '../fixture';

/** java.util.zip's gzip header, which Curator's GzipCompressionProvider writes: no name, no time, OS 0. */
const JAVA_GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0]);

describe('ZkClient compressed data', () => {
  const zk = useZooKeeper();
  let client: ZkClient;
  let root: string;

  beforeEach(async () => {
    client = await zk.connect();
    root = randomRoot('gzip');
    await client.create(root);
  });

  it('create and setData with compressed store gzip as java.util.zip writes it; getData with compressed reads it back', async () => {
    const text = JSON.stringify({ replicas: Array.from({ length: 200 }, (_, i) => ({ id: i, state: 'active' })) });
    const path = await client.create(`${root}/state.json`, { data: text, compressed: true });
    const stored = (await client.getData(path)).data;
    expect(stored.subarray(0, 10)).toEqual(JAVA_GZIP_HEADER);
    expect(gunzipSync(stored).toString()).toBe(text);
    expect(stored.length).toBeLessThan(Buffer.byteLength(text) / 5);

    const read = await client.getData(path, { compressed: true });
    expect(read.data.toString()).toBe(text);
    // The stat is the node's: its dataLength is what the server stores.
    expect(read.stat.dataLength).toBe(stored.length);

    const stat = await client.setData(path, 'second', { compressed: true, version: read.stat.version });
    expect(stat.version).toBe(read.stat.version + 1);
    expect(gunzipSync((await client.getData(path)).data).toString()).toBe('second');
    expect((await client.getData(path, { compressed: true })).data.toString()).toBe('second');
  });

  it('compresses the default data of a create without data, and empty data to the 20 bytes Curator writes for it', async () => {
    const withDefault = await client.create(`${root}/default`, { compressed: true });
    expect((await client.getData(withDefault, { compressed: true })).data).toEqual(client.options.defaultData);
    const empty = await client.create(`${root}/empty`, { data: '', compressed: true });
    expect((await client.getData(empty)).data).toEqual(Buffer.concat([JAVA_GZIP_HEADER, Buffer.from([3, 0]), Buffer.alloc(8)]));
    expect((await client.getData(empty, { compressed: true })).data.length).toBe(0);
  });

  it('writes data larger than MAX_DATA_BYTES when it compresses below the request limit, and refuses it uncompressed before any I/O', async () => {
    const big = Buffer.alloc(MAX_DATA_BYTES * 3, 'abc');
    await expect(client.create(`${root}/big`, { data: big })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await client.exists(`${root}/big`)).toBeNull();
    const path = await client.create(`${root}/big`, { data: big, compressed: true });
    expect((await client.getData(path, { compressed: true })).data.equals(big)).toBe(true);
    await expect(client.setData(path, big)).rejects.toBeInstanceOf(InvalidArgumentError);
    const bigger = Buffer.alloc(MAX_DATA_BYTES * 4, 'xyz');
    await client.setData(path, bigger, { compressed: true });
    expect((await client.getData(path, { compressed: true })).data.equals(bigger)).toBe(true);
  });

  it('refuses data that is still too large once compressed, before any I/O, and creates nothing', async () => {
    // Random bytes do not compress: gzip makes them a little larger, over the request limit.
    const noise = randomBytes(MAX_DATA_BYTES + 1024);
    const err = await client.create(`${root}/noise`, { data: noise, compressed: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toMatch(/create/);
    expect(await client.exists(`${root}/noise`)).toBeNull();
    const path = await client.create(`${root}/small`, { data: 'x' });
    await expect(client.setData(path, noise, { compressed: true })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect((await client.getData(path)).data.toString()).toBe('x');
  });

  it('rejects a compressed read of data that is not gzip, or corrupt, with a CompressionError naming the path', async () => {
    const plain = await client.create(`${root}/plain`, { data: 'not compressed' });
    const err = await client.getData(plain, { compressed: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CompressionError);
    expect(err).toMatchObject({ name: 'CompressionError', code: 'COMPRESSION_FAILED', operation: 'decompress', path: plain });
    expect((err as Error).message).toContain(plain);
    expect((err as Error).cause).toMatchObject({ code: 'Z_DATA_ERROR' });

    const good = gzipSync('some data that is long enough to have a body');
    const truncated = await client.create(`${root}/truncated`, { data: good.subarray(0, good.length - 6) });
    await expect(client.getData(truncated, { compressed: true })).rejects.toMatchObject({ code: 'COMPRESSION_FAILED', operation: 'decompress' });
    const flipped = Buffer.from(good);
    flipped[good.length - 8] ^= 0xff; // the CRC-32
    const corrupt = await client.create(`${root}/corrupt`, { data: flipped });
    await expect(client.getData(corrupt, { compressed: true })).rejects.toBeInstanceOf(CompressionError);
    // The same nodes read uncompressed as they are.
    expect((await client.getData(plain)).data.toString()).toBe('not compressed');
  });

  it('sets the watcher of a compressed read, also when the data cannot be decompressed', async () => {
    const path = await client.create(`${root}/watched`, { data: 'plain' });
    let fire: (type: string) => void = () => undefined;
    const fired = nextEvent<string>((done) => (fire = done), 'the watch of the compressed read');
    await expect(client.getData(path, { compressed: true, watcher: (e) => fire(e.type) })).rejects.toBeInstanceOf(CompressionError);
    await client.setData(path, 'v2', { compressed: true });
    expect(await fired).toBe('changed');
  });

  it('with enableCompression, compresses every create and setData and decompresses every getData; compressed: false opts out', async () => {
    const all = await zk.connect({ enableCompression: true });
    const path = await all.create(`${root}/all`, { data: 'everything compressed' });
    expect(gunzipSync((await client.getData(path)).data).toString()).toBe('everything compressed');
    expect((await all.getData(path)).data.toString()).toBe('everything compressed');
    await all.setData(path, 'again');
    expect(gunzipSync((await client.getData(path)).data).toString()).toBe('again');

    const raw = await all.create(`${root}/raw`, { data: 'as is', compressed: false });
    expect((await client.getData(raw)).data.toString()).toBe('as is');
    expect((await all.getData(raw, { compressed: false })).data.toString()).toBe('as is');
    await expect(all.getData(raw)).rejects.toBeInstanceOf(CompressionError);

    // Parents made without data read as empty, not as corrupt.
    const child = await all.create(`${root}/parents/a/b`, { data: 'deep', createParents: 'persistent' });
    expect((await all.getData(`${root}/parents/a`)).data.length).toBe(0);
    expect((await all.getData(child)).data.toString()).toBe('deep');
  });

  it("uses the client's compression provider, given the path relative to the namespace", async () => {
    const seen: string[] = [];
    const reversing: CompressionProvider = {
      compress: (path, data) => {
        seen.push(`compress ${path}`);
        return Buffer.from(data).reverse();
      },
      decompress: async (path, data) => {
        seen.push(`decompress ${path}`);
        return Buffer.from(data).reverse();
      },
    };
    const custom = await zk.connect({ compression: reversing, namespace: root.slice(1) });
    await custom.create('/r', { data: 'abc', compressed: true });
    expect((await client.getData(`${root}/r`)).data.toString()).toBe('cba');
    expect((await custom.getData('/r', { compressed: true })).data.toString()).toBe('abc');
    expect(seen).toEqual(['compress /r', 'decompress /r']);
  });

  it('a provider that fails rejects the write with a CompressionError, and nothing is written', async () => {
    const failing = await zk.connect({
      compression: {
        compress: () => {
          throw new Error('no room');
        },
        decompress: () => Promise.reject(new Error('cannot')),
      },
    });
    const err = await failing.create(`${root}/failed`, { data: 'x', compressed: true }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'CompressionError', operation: 'compress', path: `${root}/failed` });
    expect(((err as Error).cause as Error).message).toBe('no room');
    expect(await client.exists(`${root}/failed`)).toBeNull();
    const path = await client.create(`${root}/kept`, { data: 'kept' });
    await expect(failing.setData(path, 'y', { compressed: true })).rejects.toMatchObject({ operation: 'compress' });
    expect((await client.getData(path)).data.toString()).toBe('kept');
  });

  it('refuses bad compression options with InvalidArgumentError before any I/O', async () => {
    expect(() => new ZkClient({ connectString: zk.connectString, compression: {} as never })).toThrow(InvalidArgumentError);
    expect(() => new ZkClient({ connectString: zk.connectString, enableCompression: 'yes' as never })).toThrow(InvalidArgumentError);
    expect(() => new GzipCompressionProvider({ level: 10 })).toThrow(InvalidArgumentError);
    await expect(client.create(`${root}/bad`, { data: 'x', compressed: 1 as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client.setData(root, 'x', { compressed: 'yes' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client.getData(root, { compressed: null as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await client.exists(`${root}/bad`)).toBeNull();
  });

  it('compresses at the level asked', async () => {
    const data = Buffer.alloc(100_000, 'compressible text ');
    const stored = await zk.connect({ compression: new GzipCompressionProvider({ level: 0 }) });
    const path = await stored.create(`${root}/level0`, { data, compressed: true });
    const raw = (await client.getData(path)).data;
    expect(raw.length).toBeGreaterThan(data.length);
    expect((await stored.getData(path, { compressed: true })).data.equals(data)).toBe(true);
  });
});
