import { InterProcessMutex } from '../../recipes/locks';
import { TestingServer } from '../../src/testing';
import { Clients, childrenOf, eventually, randomRoot, timing } from '../helpers';
import { CuratorPeer } from './CuratorPeer';

describe('InterProcessMutex and Curator InterProcessMutex on the same path', () => {
  let server: TestingServer;
  let peer: CuratorPeer;
  const clients = new Clients();

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    peer = await CuratorPeer.start(server.connectString, { label: 'curator' });
  });
  afterEach(() => clients.closeAll());
  afterAll(async () => {
    await peer?.close();
    await server?.close();
  });

  it('exclude each other both ways, with the same node layout', async () => {
    const path = `${randomRoot('interop')}/mutex`;
    const client = await clients.connect({ connectString: server.connectString });
    const ours = new InterProcessMutex(client, path);
    await peer.request('mutex.new', { name: 'excl', path });

    expect(await peer.request('mutex.acquire', { name: 'excl', timeoutMs: timing(10_000) })).toMatchObject({ acquired: true });
    expect(await ours.tryAcquire()).toBeUndefined();
    await peer.request('mutex.release', { name: 'excl' });

    const lease = await ours.acquire({ timeoutMs: timing(10_000) });
    expect(lease.node).toMatch(/\/_c_[0-9a-f-]{36}-lock-\d{10}$/);
    expect(await peer.request('mutex.acquire', { name: 'excl', timeoutMs: 300 })).toMatchObject({ acquired: false });
    // Curator sees our node as the lock's holder.
    const { participants } = await peer.request<{ participants: string[] }>('mutex.participants', { name: 'excl' });
    expect(participants).toEqual([lease.node]);
    await lease.release();
    expect(await childrenOf(client, path)).toEqual([]);
  });

  it('queue fairly across both: Java and Node waiters are served in the order they asked', async () => {
    const path = `${randomRoot('interop')}/fifo`;
    const client = await clients.connect({ connectString: server.connectString });
    const second = await clients.connect({ connectString: server.connectString });
    await peer.request('mutex.new', { name: 'fifo', path });
    const holder = await new InterProcessMutex(client, path).acquire();

    const order: string[] = [];
    const javaWaiter = peer.request<{ acquired: boolean }>('mutex.acquire', { name: 'fifo', timeoutMs: timing(30_000) }).then((r) => {
      order.push('java');
      return r;
    });
    await eventually('the Java waiter queued', async () => (await childrenOf(client, path)).length === 2);
    const nodeWaiter = new InterProcessMutex(second, path).acquire({ timeoutMs: timing(30_000) }).then((l) => {
      order.push('node');
      return l;
    });
    await eventually('the Node waiter queued', async () => (await childrenOf(client, path)).length === 3);

    await holder.release();
    expect((await javaWaiter).acquired).toBe(true);
    expect(order).toEqual(['java']);
    await peer.request('mutex.release', { name: 'fifo' });
    const lease = await nodeWaiter;
    expect(order).toEqual(['java', 'node']);
    await lease.release();
  });

  it('mutual exclusion holds under a mixed loop of Java and Node contenders', async () => {
    const path = `${randomRoot('interop')}/mixed`;
    const client = await clients.connect({ connectString: server.connectString });
    // The Java side loops acquire/release in its own thread while two Node flows contend; a data
    // node records the holder, and each holder checks that nobody else entered meanwhile.
    await peer.request('mutex.new', { name: 'mixed', path });
    const marker = `${randomRoot('interop')}-marker`;
    await client.create(marker, { data: '' });
    let violations = 0;
    const nodeFlows = [0, 1].map(async (flow) => {
      const mutex = new InterProcessMutex(client, path);
      for (let i = 0; i < 15; i++) {
        const lease = await mutex.acquire({ timeoutMs: timing(30_000) });
        const me = `node-${flow}-${i}`;
        await client.setData(marker, me);
        await new Promise((r) => setImmediate(r));
        if ((await client.getData(marker)).data.toString() !== me) violations++;
        await lease.release();
      }
    });
    const javaFlow = (async () => {
      for (let i = 0; i < 15; i++) {
        await peer.request('mutex.acquire', { name: 'mixed', timeoutMs: timing(30_000) });
        await client.setData(marker, `java-${i}`);
        if ((await client.getData(marker)).data.toString() !== `java-${i}`) violations++;
        await peer.request('mutex.release', { name: 'mixed' });
      }
    })();
    await Promise.all([...nodeFlows, javaFlow]);
    expect(violations).toBe(0);
  });
});
