import { PersistentNode, PersistentNodeTimeoutError } from '../../../recipes/nodes';
import { IllegalStateError, InvalidArgumentError, Perms, ZkClient } from '../../../src';
import { TestingServer } from '../../../src/testing';
import { StateRecorder, childrenOf, eventually, protectedSequential, randomRoot, timing, watchNode } from '../../helpers';
import { useZooKeeper } from '../../fixture';

describe('PersistentNode', () => {
  const nodes: PersistentNode[] = [];
  let dir: string;
  let path: string;

  const zk = useZooKeeper({ beforeClose: () => Promise.all(nodes.splice(0).map((n) => n.close())) });
  beforeEach(() => {
    dir = `${randomRoot('pnode')}/test`;
    path = `${dir}/foo`;
  });

  const connect = () => zk.clients.connect({ connectString: zk.server.connectString });
  const started = (client: ZkClient, p: string, options: ConstructorParameters<typeof PersistentNode>[2] = {}) => {
    const node = new PersistentNode(client, p, options);
    nodes.push(node);
    node.start();
    return node;
  };
  const initial = (node: PersistentNode) => node.waitForInitialCreate({ timeoutMs: timing(10_000) });

  // Curator's testBasic: a persistent node outlives the session that made it.
  it('PERSISTENT: created with its data, and still there after its client closed', async () => {
    const client = await connect();
    const node = started(client, path, { mode: 'PERSISTENT', data: 'hey' });
    await initial(node);
    expect(node.actualPath).toBe(path);
    await client.close();
    const other = await connect();
    expect((await other.getData(path)).data.toString()).toBe('hey');
  });

  // testData, testDeletesNodeWhenClosed, testClosingMultipleTimes.
  it('EPHEMERAL (the default): created with its data in our session, deleted by close(), which is idempotent', async () => {
    const client = await connect();
    const node = started(client, path, { data: 'Hello World' });
    await initial(node);
    const stat = await client.exists(path);
    expect(stat?.ephemeralOwner).toBe(client.sessionId);
    expect((await client.getData(path)).data.toString()).toBe('Hello World');
    // The parents are containers.
    expect((await client.getACL(dir)).stat.ephemeralOwner).toBe(0n);
    await node.close();
    expect(await client.exists(path)).toBeNull();
    await node.close();
    await expect(node.waitForInitialCreate()).rejects.toThrow(IllegalStateError);
  });

  // testSettingData, testSettingDataSequential, and setData while running.
  it.each(['EPHEMERAL', 'EPHEMERAL_SEQUENTIAL'] as const)('%s: setData writes into the node and keeps its name', async (mode) => {
    const client = await connect();
    const node = started(client, path, { mode, data: 'a' });
    await initial(node);
    const actual = node.actualPath as string;
    if (mode === 'EPHEMERAL_SEQUENTIAL') expect(actual).toMatch(/\/foo\d{10}$/);
    let watched = await watchNode(client, actual);
    await node.setData('b', { timeoutMs: timing(10_000) });
    expect(await watched.next).toBe('changed');
    expect((await client.getData(actual)).data.toString()).toBe('b');
    watched = await watchNode(client, actual);
    await node.setData('c');
    expect(await watched.next).toBe('changed');
    expect(node.actualPath).toBe(actual);
    expect(node.getData().toString()).toBe('c');
    watched = await watchNode(client, actual);
    await node.close();
    expect(await watched.next).toBe('deleted');
  });

  // testRecreatesNodeWhenItGetsDeleted: same session, so the same name.
  it('is created again, under the same name and with its data, when someone deletes it', async () => {
    const client = await connect();
    const other = await connect();
    const created: string[] = [];
    const node = started(client, path, { mode: 'EPHEMERAL_SEQUENTIAL', protected: true, data: 'x' });
    node.on('created', (p) => created.push(p));
    await initial(node);
    const actual = node.actualPath as string;
    expect(actual.slice(dir.length + 1)).toMatch(protectedSequential('foo'));
    await other.delete(actual);
    // The other client may see the node before the create's reply reaches ours: wait for both.
    await eventually('the node to come back, and its created event', async () => created.length === 2 && (await other.exists(actual))?.ephemeralOwner === client.sessionId);
    expect((await other.getData(actual)).data.toString()).toBe('x');
    expect(created).toEqual([actual, actual]);
    expect(await childrenOf(other, dir)).toHaveLength(1);
  });

  // testNodesCreateUniquePaths.
  it('two sequential nodes on one path get their own names', async () => {
    const client = await connect();
    const a = started(client, path, { mode: 'EPHEMERAL_SEQUENTIAL' });
    const b = started(client, path, { mode: 'EPHEMERAL_SEQUENTIAL' });
    await Promise.all([initial(a), initial(b)]);
    expect(a.actualPath).not.toBe(b.actualPath);
  });

  // testSetDataWhenNodeExists and testQuickCloseNodeExists: a node already there is taken over.
  it('takes over a node already there: writes its data into it, and close() deletes it', async () => {
    const client = await connect();
    await client.create(path, { data: 'InitialData', createParents: 'persistent' });
    const node = started(client, path, { mode: 'PERSISTENT', data: 'Hello World' });
    await initial(node);
    expect((await client.getData(path)).data.toString()).toBe('Hello World');
    await node.close();
    expect(await client.exists(path)).toBeNull();
  });

  // testQuickClose: closed before its create answers, it leaves nothing.
  it('closed at once after start, it leaves no node behind', async () => {
    const client = await connect();
    const node = started(client, `${dir}/one/two`, { mode: 'PERSISTENT' });
    await node.close();
    await eventually('no background deletes left', () => client.pendingBackgroundDeletes === 0);
    expect(await client.exists(`${dir}/one/two`)).toBeNull();
  });

  // testQuickSetData, where Curator refuses setData before the first create: here it is the data of that create.
  it('setData before start or before the first create changes the data the create uses', async () => {
    const client = await connect();
    const node = new PersistentNode(client, path, { mode: 'PERSISTENT', data: 'hey' });
    nodes.push(node);
    await node.setData('there');
    node.start();
    await initial(node);
    expect((await client.getData(path)).data.toString()).toBe('there');
  });

  // testCreationWithParentCreationOff and testRecreationWithParentCreationOff.
  it('without parent creation, a missing parent keeps the node from being created; errors are reported and retried', async () => {
    const client = await connect();
    const errors: unknown[] = [];
    const lone = started(client, `${dir}/one/two`, { mode: 'PERSISTENT', createParents: false });
    lone.on('error', (err) => errors.push(err));
    await expect(lone.waitForInitialCreate({ timeoutMs: 500 })).rejects.toThrow(PersistentNodeTimeoutError);
    // The wait runs out at 500 ms whatever the server does; the first NONODE may come later.
    await eventually('a reported error', () => errors.length > 0);
    expect(errors[0]).toMatchObject({ code: 'NONODE' });

    await client.ensurePath(`${dir}/one`);
    await initial(lone);
    await lone.close();
    const node = started(client, `${dir}/one/eph`, { data: 'hey', createParents: false });
    const nodeErrors: unknown[] = [];
    node.on('error', (err) => nodeErrors.push(err));
    await initial(node);
    // Deleted from another session, whose delete of the parent comes right behind that of the child.
    const other = await connect();
    await other.delete(`${dir}/one`, { recursive: true });
    await eventually('a failed re-create to be reported', () => nodeErrors.length > 0);
    expect(nodeErrors[0]).toMatchObject({ code: 'NONODE' });
    expect(await client.exists(`${dir}/one/eph`)).toBeNull();
    expect(node.getData().toString()).toBe('hey');
  });

  // testNoCreatePermission.
  it('a create refused for want of permission is reported, and the node is not there', async () => {
    const client = await connect();
    await client.create(dir, { createParents: 'persistent' });
    await client.setACL(dir, [{ perms: Perms.READ | Perms.ADMIN, scheme: 'world', id: 'anyone' }]);
    const errors: unknown[] = [];
    const node = started(client, path);
    node.on('error', (err) => errors.push(err));
    await eventually('the refusal to be reported', () => errors.length > 0);
    expect(errors[0]).toMatchObject({ code: 'NOAUTH' });
    expect(await client.exists(path)).toBeNull();
    await client.setACL(dir, [{ perms: Perms.ALL, scheme: 'world', id: 'anyone' }]);
    await initial(node);
  });

  // testNoServerAtStart.
  it('started before the server is up, it creates the node once it is', async () => {
    const later = await TestingServer.start({ forceSync: false });
    await later.stop();
    const client = zk.clients.create({ connectString: later.connectString });
    client.start();
    const states = new StateRecorder(client);
    const node = started(client, path, { data: 'hello' });
    await later.start();
    await states.waitFor('CONNECTED', 0);
    await initial(node);
    expect((await client.getData(path)).data.toString()).toBe('hello');
    await node.close();
    await client.close();
    await later.close();
  });

  it('refuses misuse and bad input', async () => {
    const client = new ZkClient({ connectString: zk.server.connectString });
    expect(() => new PersistentNode(client, 'x')).toThrow(InvalidArgumentError);
    expect(() => new PersistentNode(client, path, { mode: 'NOPE' as never })).toThrow(InvalidArgumentError);
    expect(() => new PersistentNode(client, path, { mode: 'PERSISTENT_WITH_TTL' })).toThrow(InvalidArgumentError);
    expect(() => new PersistentNode(client, path, { ttlMs: 5 })).toThrow(InvalidArgumentError);
    expect(() => new PersistentNode(client, path, { data: 5 as never })).toThrow(InvalidArgumentError);
    const node = new PersistentNode(client, path);
    expect(() => node.start()).toThrow(IllegalStateError);
    await expect(node.waitForInitialCreate()).rejects.toThrow(IllegalStateError);
    await expect(node.setData(Buffer.alloc(2_000_000))).rejects.toThrow(InvalidArgumentError);
    await expect(node.setData('x', { timeoutMs: -1 })).rejects.toThrow(InvalidArgumentError);
    await client.close();
  });
});
