import { PersistentNode, PersistentNodeTimeoutError } from '../../../recipes/nodes';
import type { ZkClient } from '../../../src';
import { FaultProxy, expireSession } from '../../../src/testing';
import { StateRecorder, childrenOf, eventually, randomRoot, timing, watchNode } from '../../helpers';
import { useZooKeeper } from '../../fixture';

describe('PersistentNode under faults', () => {
  const nodes: PersistentNode[] = [];
  let dir: string;
  let path: string;

  const zk = useZooKeeper({ beforeClose: () => Promise.all(nodes.splice(0).map((n) => n.close())) });
  beforeEach(() => {
    dir = `${randomRoot('pnode-faults')}/test`;
    path = `${dir}/foo`;
  });

  const connect = (connectString = zk.server.connectString, sessionTimeoutMs = 10_000) => zk.clients.connect({ connectString, sessionTimeoutMs });
  const started = (client: ZkClient, p: string, options: ConstructorParameters<typeof PersistentNode>[2] = {}) => {
    const node = new PersistentNode(client, p, options);
    nodes.push(node);
    node.start();
    return node;
  };
  const ownedBy = async (observer: ZkClient, p: string, owner: ZkClient) => (await observer.exists(p))?.ephemeralOwner === owner.sessionId;

  // Curator's testRecreatesNodeWhenSessionReconnectsMultipleTimes.
  it('its session expires again and again: each time the node goes, and comes back under the same name in the new session', async () => {
    const client = await connect();
    const observer = await connect();
    const states = new StateRecorder(client);
    const node = started(client, path, { mode: 'EPHEMERAL_SEQUENTIAL', protected: true, data: 'me' });
    await node.waitForInitialCreate({ timeoutMs: timing(10_000) });
    const actual = node.actualPath as string;
    for (let round = 0; round < 3; round++) {
      const watched = await watchNode(observer, actual);
      expect(watched.existed).toBe(true);
      const mark = states.mark();
      await expireSession(client);
      expect(await watched.next).toBe('deleted');
      await states.waitFor('RECONNECTED', mark);
      await eventually('the node back in the new session', () => ownedBy(observer, actual, client));
      expect((await observer.getData(actual)).data.toString()).toBe('me');
      expect(await childrenOf(observer, dir)).toHaveLength(1);
    }
    expect(node.actualPath).toBe(actual);
  });

  // Curator's testRecreatesNodeWhenEphemeralOwnerSessionExpires.
  it("takes over another session's ephemeral node, and creates its own when that session expires", async () => {
    const creator = await connect();
    const observer = await connect();
    const client = await connect();
    await creator.create(path, { mode: 'EPHEMERAL', data: '', createParents: 'persistent' });
    const changed = await watchNode(observer, path);
    const node = started(client, path, { data: 'mine' });
    await node.waitForInitialCreate({ timeoutMs: timing(10_000) });
    expect(await changed.next).toBe('changed');
    expect((await observer.getData(path)).data.toString()).toBe('mine');
    const deleted = await watchNode(observer, path);
    await expireSession(creator);
    expect(await deleted.next).toBe('deleted');
    await eventually('our node to be created', () => ownedBy(observer, path, client));
    expect((await observer.getData(path)).data.toString()).toBe('mine');
  });

  // Curator's testProtected and testEphemeralSequentialWithProtectionReconnection.
  it('a server restart keeps one protected sequential node, under its name', async () => {
    const client = await connect();
    const node = started(client, path, { mode: 'EPHEMERAL_SEQUENTIAL', protected: true });
    await node.waitForInitialCreate({ timeoutMs: timing(10_000) });
    const before = await client.getChildren(dir);
    expect(before).toHaveLength(1);
    const states = new StateRecorder(client);
    const mark = states.mark();
    await zk.server.restart();
    await states.waitFor('RECONNECTED', mark);
    const observer = await connect();
    await eventually('the node to stand', () => ownedBy(observer, node.actualPath as string, client));
    expect(await observer.getChildren(dir)).toEqual(before);
  });

  // Curator's testSetDataWhenDisconnected and testSetUpdatedDataWhenReconnected.
  it('setData while the server is down: a bounded call times out, and the node gets the data once it is back', async () => {
    const client = await connect();
    const node = started(client, path, { data: 'Hello World' });
    await node.waitForInitialCreate({ timeoutMs: timing(10_000) });
    await zk.server.stop();
    await expect(node.setData('Updated', { timeoutMs: 300 })).rejects.toThrow(PersistentNodeTimeoutError);
    const written = node.setData('Updated again');
    await zk.server.start();
    await written;
    expect((await client.getData(path)).data.toString()).toBe('Updated again');
  });

  it('a partition longer than the session: the node goes with the session and comes back once the client has a new one', async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const client = await connect(proxy.connectString, 4_000);
    const observer = await connect();
    const states = new StateRecorder(client);
    const created: string[] = [];
    const node = started(client, path, { mode: 'EPHEMERAL_SEQUENTIAL', data: 'x' });
    node.on('created', (p) => created.push(p));
    await node.waitForInitialCreate({ timeoutMs: timing(10_000) });
    const actual = node.actualPath as string;
    const deleted = await watchNode(observer, actual, timing(30_000));
    const mark = states.mark();
    proxy.blackhole();
    await states.waitFor('LOST', mark);
    // Healed as soon as the client gives the session up: possibly before the server expires it,
    // so the old session's node may still stand when the new session looks.
    proxy.heal();
    expect(await deleted.next).toBe('deleted');
    // The observer may see the node before the create's reply reaches the client: wait for both.
    await eventually('the node back in the new session, and its created event', async () => created.length === 2 && (await ownedBy(observer, actual, client)), timing(30_000));
    expect(created).toEqual([actual, actual]);
    expect(await childrenOf(observer, dir)).toHaveLength(1);
  });
});
