import { gunzipSync } from 'node:zlib';
import { CompressionError, InvalidArgumentError, MAX_DATA_BYTES, type ZkClient } from '../../src';
import { randomRoot } from '../helpers';
import { useZooKeeper } from '../fixture';
import { CuratorPeer } from '../interop/CuratorPeer';

// Transactions need multi, which only the protocol transport has.
describe('transactions with compressed data', () => {
  const zk = useZooKeeper();
  let client: ZkClient;
  let root: string;

  beforeEach(async () => {
    client = await zk.connect();
    root = randomRoot('gzip-txn');
    await client.create(root);
  });

  it("compresses the data of the creates and setDatas given compressed, as Curator's .compressed() in a transaction", async () => {
    await client.create(`${root}/existing`, { data: 'old' });
    const big = Buffer.alloc(MAX_DATA_BYTES * 2, 'compressible ');
    await client
      .transaction()
      .create(`${root}/c`, { data: big, compressed: true })
      .create(`${root}/plain`, { data: 'plain' })
      .setData(`${root}/existing`, 'new', { compressed: true })
      .commit();
    expect(gunzipSync((await client.getData(`${root}/c`)).data).equals(big)).toBe(true);
    expect((await client.getData(`${root}/plain`)).data.toString()).toBe('plain');
    expect((await client.getData(`${root}/existing`, { compressed: true })).data.toString()).toBe('new');
  });

  it('with enableCompression, compresses every create and setData of a transaction unless it says compressed: false; with markerParent too', async () => {
    const all = await zk.connect({ enableCompression: true });
    await all
      .transaction()
      .create(`${root}/a`, { data: 'a' })
      .create(`${root}/b`, { data: 'b', compressed: false })
      .commit({ markerParent: `${root}/markers` });
    expect((await all.getData(`${root}/a`)).data.toString()).toBe('a');
    expect((await client.getData(`${root}/b`)).data.toString()).toBe('b');
    await all.transaction().setData(`${root}/b`, 'b2').commit();
    expect(gunzipSync((await client.getData(`${root}/b`)).data).toString()).toBe('b2');
  });

  it('a provider that fails rejects the commit with a CompressionError, and nothing of the transaction happens', async () => {
    const failing = await zk.connect({
      compression: {
        compress: () => Promise.reject(new Error('refused')),
        decompress: (_path, data) => data,
      },
    });
    const err = await failing
      .transaction()
      .create(`${root}/first`, { data: 'x' })
      .create(`${root}/second`, { data: 'y', compressed: true })
      .commit()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CompressionError);
    expect(err).toMatchObject({ operation: 'compress', path: `${root}/second` });
    expect(await client.exists(`${root}/first`)).toBeNull();
  });

  it("Curator reads with .decompressed() what a transaction compressed", async () => {
    await using peer = await CuratorPeer.start(zk.server.connectString, { label: 'curator-gzip-txn' });
    await client.create(`${root}/set`, { data: 'old' });
    await client.transaction().create(`${root}/made`, { data: 'made in a transaction', compressed: true }).setData(`${root}/set`, 'set in a transaction', { compressed: true }).commit();
    const javaRead = async (path: string) => Buffer.from((await peer.request<{ base64: string }>('gzip.getData', { path, decompressed: true })).base64, 'base64').toString();
    expect(await javaRead(`${root}/made`)).toBe('made in a transaction');
    expect(await javaRead(`${root}/set`)).toBe('set in a transaction');
  });

  it('refuses a bad compressed flag when the operation is added', () => {
    expect(() => client.transaction().create(`${root}/x`, { compressed: 'yes' as never })).toThrow(InvalidArgumentError);
    expect(() => client.transaction().setData(`${root}/x`, 'x', { compressed: 0 as never })).toThrow(InvalidArgumentError);
  });
});
