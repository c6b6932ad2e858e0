import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { CompressionError, MAX_DATA_BYTES, type ZkClient } from '../../src';
import { randomRoot } from '../helpers';
import { useZooKeeper } from '../fixture';
import { CuratorPeer, CuratorPeerError } from './CuratorPeer';

/**
 * Curator 5.4 with its default GzipCompressionProvider on one side, ours on the other: what either
 * writes compressed, the other reads.
 */
describe("compressed data with Curator's GzipCompressionProvider", () => {
  const zk = useZooKeeper();
  let peer: CuratorPeer;
  let client: ZkClient;
  let root: string;

  const javaRead = async (path: string, decompressed: boolean): Promise<Buffer> =>
    Buffer.from((await peer.request<{ base64: string }>('gzip.getData', { path, decompressed })).base64, 'base64');

  beforeAll(async () => {
    peer = await CuratorPeer.start(zk.server.connectString, { label: 'curator-gzip' });
  });
  beforeEach(async () => {
    client = await zk.connect();
    root = randomRoot('interop-gzip');
    await client.create(root);
  });
  afterAll(async () => {
    await peer?.close();
  });

  it("reads what Curator's create, setData and transactions write with .compressed()", async () => {
    const text = JSON.stringify({ shards: Array.from({ length: 100 }, (_, i) => ({ name: `shard${i}`, leader: `node${i % 3}` })) });
    await peer.request('gzip.create', { path: `${root}/java`, base64: Buffer.from(text).toString('base64') });
    const stored = (await client.getData(`${root}/java`)).data;
    expect(stored.length).toBeLessThan(Buffer.byteLength(text));
    expect((await client.getData(`${root}/java`, { compressed: true })).data.toString()).toBe(text);

    await peer.request('gzip.setData', { path: `${root}/java`, base64: Buffer.from('changed by Java').toString('base64') });
    expect((await client.getData(`${root}/java`, { compressed: true })).data.toString()).toBe('changed by Java');

    await peer.request('gzip.transaction', { op: 'create', path: `${root}/java-txn`, base64: Buffer.from('in a transaction').toString('base64') });
    expect((await client.getData(`${root}/java-txn`, { compressed: true })).data.toString()).toBe('in a transaction');
    await peer.request('gzip.transaction', { op: 'setData', path: `${root}/java-txn`, base64: Buffer.from('set in a transaction').toString('base64') });
    expect((await client.getData(`${root}/java-txn`, { compressed: true })).data.toString()).toBe('set in a transaction');
  });

  it('writes what Curator reads with .decompressed(), binary and empty data too, with the header java.util.zip writes', async () => {
    const binary = randomBytes(5_000);
    await client.create(`${root}/node`, { data: binary, compressed: true });
    expect((await javaRead(`${root}/node`, true)).equals(binary)).toBe(true);
    // The stored bytes begin as Curator's own: java.util.zip's header (OS byte 0).
    await peer.request('gzip.create', { path: `${root}/java-ref`, base64: binary.toString('base64') });
    expect((await client.getData(`${root}/node`)).data.subarray(0, 10)).toEqual((await javaRead(`${root}/java-ref`, false)).subarray(0, 10));

    await client.setData(`${root}/node`, 'written by Node', { compressed: true });
    expect((await javaRead(`${root}/node`, true)).toString()).toBe('written by Node');

    await client.create(`${root}/empty`, { data: '', compressed: true });
    expect((await javaRead(`${root}/empty`, true)).length).toBe(0);
    // Curator compresses empty data to the same 20 bytes.
    await peer.request('gzip.create', { path: `${root}/java-empty`, base64: '' });
    expect((await client.getData(`${root}/empty`)).data).toEqual(await javaRead(`${root}/java-empty`, false));
  });

  it('data over the uncompressed limit goes both ways', async () => {
    const big = Buffer.alloc(MAX_DATA_BYTES * 2, 'many replicas, one state.json; ');
    await client.create(`${root}/big-node`, { data: big, compressed: true });
    expect((await javaRead(`${root}/big-node`, true)).equals(big)).toBe(true);
    await peer.request('gzip.create', { path: `${root}/big-java`, base64: big.toString('base64') });
    expect((await client.getData(`${root}/big-java`, { compressed: true })).data.equals(big)).toBe(true);
  });

  it("with enableCompression, every write is one Curator reads decompressed, and Curator's compressed writes read plainly", async () => {
    const all = await zk.connect({ enableCompression: true });
    await all.create(`${root}/all`, { data: 'global' });
    expect((await javaRead(`${root}/all`, true)).toString()).toBe('global');
    await peer.request('gzip.setData', { path: `${root}/all`, base64: Buffer.from('from Java').toString('base64') });
    expect((await all.getData(`${root}/all`)).data.toString()).toBe('from Java');
  });

  it('a compressed read of data that is not compressed fails on both sides: Curator with a ZipException, ours with a CompressionError', async () => {
    await client.create(`${root}/plain`, { data: 'plain text' });
    const javaErr = await javaRead(`${root}/plain`, true).catch((e: unknown) => e);
    expect(javaErr).toBeInstanceOf(CuratorPeerError);
    expect((javaErr as Error).message).toMatch(/ZipException.*Not in GZip format/);
    await expect(client.getData(`${root}/plain`, { compressed: true })).rejects.toBeInstanceOf(CompressionError);
    // Uncompressed, each reads the other's compressed bytes as they are.
    await peer.request('gzip.create', { path: `${root}/java-plain-read`, base64: Buffer.from('x').toString('base64') });
    expect(gunzipSync((await client.getData(`${root}/java-plain-read`)).data).toString()).toBe('x');
  });
});
