import { DistributedBarrier, DistributedDoubleBarrier } from '../../recipes/barriers';
import type { ZkClient } from '../../src';
import { TestingServer } from '../../src/testing';
import { Clients, childrenOf, eventually, isWatching, randomRoot, timing } from '../helpers';
import { CuratorPeer } from './CuratorPeer';

describe("the barriers with Curator's on the same path", () => {
  let server: TestingServer;
  let peer: CuratorPeer;
  const clients = new Clients();
  let client: ZkClient;
  let root: string;

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    peer = await CuratorPeer.start(server.connectString, { label: 'curator-barriers' });
  });
  beforeEach(async () => {
    root = randomRoot('interop-barrier');
    client = await clients.connect({ connectString: server.connectString });
  });
  afterEach(() => clients.closeAll());
  afterAll(async () => {
    await peer?.close();
    await server?.close();
  });

  it("DistributedBarrier: each side's barrier holds the other's waiters until it is removed", async () => {
    const path = `${root}/barrier`;
    await peer.request('barrier.new', { name: 'b', path });
    await peer.request('barrier.set', { name: 'b' });
    const ours = new DistributedBarrier(client, path);
    let released = false;
    const waiting = ours.waitOnBarrier({ timeoutMs: timing(20_000) }).then(() => (released = true));
    await eventually('our wait to watch', () => isWatching(server, path, client.sessionId));
    expect(released).toBe(false);
    await peer.request('barrier.remove', { name: 'b' });
    await waiting;

    await ours.setBarrier();
    await peer.request('barrier.new', { name: 'waiter', path });
    const java = peer.request<{ passed: boolean }>('barrier.wait', { name: 'waiter', timeoutMs: timing(20_000) });
    const javaSession = BigInt(`0x${peer.sessionIdHex}`);
    await eventually("Curator's wait to watch", () => isWatching(server, path, javaSession));
    await ours.removeBarrier();
    expect((await java).passed).toBe(true);
  });

  it('DistributedDoubleBarrier: two Curator members and two of ours enter and leave together', async () => {
    const path = `${root}/double`;
    const other = await clients.connect({ connectString: server.connectString });
    const ours = [new DistributedDoubleBarrier(client, path, 4), new DistributedDoubleBarrier(other, path, 4)];
    await peer.request('doubleBarrier.new', { name: 'j1', path, memberQty: 4 });
    await peer.request('doubleBarrier.new', { name: 'j2', path, memberQty: 4 });
    const javaEnter = [
      peer.request<{ entered: boolean }>('doubleBarrier.enter', { name: 'j1', timeoutMs: timing(20_000) }),
      peer.request<{ entered: boolean }>('doubleBarrier.enter', { name: 'j2', timeoutMs: timing(20_000) }),
    ];
    await eventually('the Curator members to wait', async () => (await childrenOf(client, path)).length === 2);
    let oursIn = 0;
    const ourEnter = ours.map((b) => b.enter({ timeoutMs: timing(20_000) }).then(() => oursIn++));
    await eventually('three members waiting', async () => (await childrenOf(client, path)).length >= 3);
    expect((await Promise.all(javaEnter)).map((r) => r.entered)).toEqual([true, true]);
    await Promise.all(ourEnter);
    expect(oursIn).toBe(2);
    const names = (await client.getChildren(path)).sort();
    expect(names).toHaveLength(5);
    expect(names).toContain('ready');

    const javaLeave = ['j1', 'j2'].map((name) => peer.request<{ left: boolean }>('doubleBarrier.leave', { name, timeoutMs: timing(20_000) }));
    await Promise.all(ours.map((b) => b.leave({ timeoutMs: timing(20_000) })));
    expect((await Promise.all(javaLeave)).map((r) => r.left)).toEqual([true, true]);
    expect(await childrenOf(client, path)).toEqual([]);
  });
});
