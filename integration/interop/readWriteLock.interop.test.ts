import { InterProcessReadWriteLock } from '../../recipes/locks';
import { type ZkClient } from '../../src';
import { TestingServer } from '../../src/testing';
import { Clients, childrenOf, eventually, isWatching, randomRoot, timing } from '../helpers';
import { CuratorPeer } from './CuratorPeer';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const READ_NODE = new RegExp(`^_c_${UUID}-__READ__\\d{10}$`);
const WRITE_NODE = new RegExp(`^_c_${UUID}-__WRIT__\\d{10}$`);

/**
 * The peer runs the commands on one name in one Java thread, and Curator's read-write lock is
 * re-entrant per thread (a thread holding the write lock gets the read lock: a downgrade). So each
 * Java contender below has a name of its own, fresh in every test: `writer` and `reader`.
 */
describe('InterProcessReadWriteLock and Curator InterProcessReadWriteLock on the same path', () => {
  let server: TestingServer;
  let peer: CuratorPeer;
  const clients = new Clients();
  let path: string;
  let writer: string;
  let reader: string;
  let test = 0;

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    peer = await CuratorPeer.start(server.connectString, { label: 'curator' });
  });
  beforeEach(async () => {
    path = `${randomRoot('interop')}/rw`;
    test++;
    writer = `writer-${test}`;
    reader = `reader-${test}`;
    await peer.request('rwlock.new', { name: writer, path });
    await peer.request('rwlock.new', { name: reader, path });
  });
  afterEach(() => clients.closeAll());
  afterAll(async () => {
    await peer?.close();
    await server?.close();
  });

  const connect = () => clients.connect({ connectString: server.connectString });
  const queued = (client: ZkClient, n: number) => eventually(`${n} lock nodes`, async () => (await childrenOf(client, path)).length === n);

  it("a Curator writer excludes our readers and writers, and ours excludes Curator's", async () => {
    const client = await connect();
    const ours = new InterProcessReadWriteLock(client, path);

    expect(await peer.request('rwlock.acquireWrite', { name: writer, timeoutMs: timing(10_000) })).toMatchObject({ acquired: true });
    expect(await childrenOf(client, path)).toEqual([expect.stringMatching(WRITE_NODE)]);
    expect(await ours.readLock().tryAcquire()).toBeUndefined();
    expect(await ours.writeLock().tryAcquire()).toBeUndefined();
    await peer.request('rwlock.releaseWrite', { name: writer });

    const write = await ours.writeLock().acquire({ timeoutMs: timing(10_000) });
    expect(await peer.request('rwlock.acquireRead', { name: reader, timeoutMs: 300 })).toMatchObject({ acquired: false });
    expect(await peer.request('rwlock.acquireWrite', { name: writer, timeoutMs: 300 })).toMatchObject({ acquired: false });
    await write.release();
    expect(await childrenOf(client, path)).toEqual([]);
  });

  it('our reader and a Curator reader share, and both keep a writer out', async () => {
    const client = await connect();
    expect(await peer.request('rwlock.acquireRead', { name: reader, timeoutMs: timing(10_000) })).toMatchObject({ acquired: true });
    const read = await new InterProcessReadWriteLock(client, path).readLock().acquire({ timeoutMs: timing(10_000) });
    const nodes = await childrenOf(client, path);
    expect(nodes).toHaveLength(2);
    for (const node of nodes) expect(node).toMatch(READ_NODE);

    expect(await peer.request('rwlock.acquireWrite', { name: writer, timeoutMs: 300 })).toMatchObject({ acquired: false });
    const other = await connect();
    expect(await new InterProcessReadWriteLock(other, path).writeLock().tryAcquire()).toBeUndefined();

    await peer.request('rwlock.releaseRead', { name: reader });
    await read.release();
    expect(await childrenOf(client, path)).toEqual([]);
  });

  it('serves both in FIFO order: a Curator write waiter queued before our read request gets the lock first', async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    const holder = await new InterProcessReadWriteLock(a, path).readLock().acquire({ timeoutMs: timing(10_000) });
    const order: string[] = [];
    const javaWriter = peer.request<{ acquired: boolean }>('rwlock.acquireWrite', { name: writer, timeoutMs: timing(30_000) }).then((reply) => {
      order.push('java writer');
      return reply;
    });
    await queued(a, 2);
    const nodeReader = new InterProcessReadWriteLock(b, path)
      .readLock()
      .acquire({ timeoutMs: timing(30_000) })
      .then((lease) => {
        order.push('node reader');
        return lease;
      });
    await queued(a, 3);

    await holder.release();
    expect((await javaWriter).acquired).toBe(true);
    expect(order).toEqual(['java writer']);
    await peer.request('rwlock.releaseWrite', { name: writer });
    const read = await nodeReader;
    expect(order).toEqual(['java writer', 'node reader']);
    await read.release();
  });

  it('a Curator reader arriving behind our queued writer waits: Curator sees our node as a writer', async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    const holder = await new InterProcessReadWriteLock(a, path).readLock().acquire({ timeoutMs: timing(10_000) });
    const ourWriter = new InterProcessReadWriteLock(b, path).writeLock().acquire({ timeoutMs: timing(30_000) });
    await queued(a, 2);
    // Only a reader holds, but the Curator reader is behind our writer.
    expect(await peer.request('rwlock.acquireRead', { name: reader, timeoutMs: 300 })).toMatchObject({ acquired: false });
    await holder.release();
    const write = await ourWriter;
    expect(await peer.request('rwlock.acquireRead', { name: reader, timeoutMs: 300 })).toMatchObject({ acquired: false });
    await write.release();
    expect(await peer.request('rwlock.acquireRead', { name: reader, timeoutMs: timing(10_000) })).toMatchObject({ acquired: true });
    await peer.request('rwlock.releaseRead', { name: reader });
  });

  it('our downgrade holds off a Curator writer queued meanwhile: it waits on our read node', async () => {
    const client = await connect();
    const ours = new InterProcessReadWriteLock(client, path);
    const write = await ours.writeLock().acquire({ timeoutMs: timing(10_000) });
    let javaHolds = false;
    const javaWriter = peer.request<{ acquired: boolean }>('rwlock.acquireWrite', { name: writer, timeoutMs: timing(30_000) }).then((reply) => {
      javaHolds = true;
      return reply;
    });
    await queued(client, 2);
    const read = await ours.readLock().acquire({ reenter: write, timeoutMs: timing(10_000) });
    expect(read.node.endsWith(`__READ__${write.node.slice(-10)}`)).toBe(true);
    await write.release();

    // Curator's writer wakes when our write node goes, lists again and watches our read node.
    const { sessionId } = await peer.sessionCredentials();
    const outcome = await eventually('the Curator writer to watch our read node, or to slip in', async () => {
      if (javaHolds) return 'the Curator writer slipped in';
      return (await isWatching(server, read.node, sessionId)) && 'the Curator writer waits on our read node';
    });
    expect(outcome).toBe('the Curator writer waits on our read node');
    await read.release();
    expect((await javaWriter).acquired).toBe(true);
    await peer.request('rwlock.releaseWrite', { name: writer });
  });
});
