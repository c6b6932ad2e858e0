import { PersistentTtlNode } from '../../../recipes/nodes';
import { InvalidArgumentError, ZkClient } from '../../../src';
import { eventually, randomRoot, timing, watchNode } from '../../helpers';
import { useZooKeeper } from '../../fixture';

// Long enough that a stalled test process or server JVM (a loaded machine) does not let a node
// that is being touched expire, and that a watch set right after a create finds the node.
const TTL_MS = 2_000;
// The tests that prove touches keep the node (or bring the touch node back) touch it every 250 ms,
// so a stall of under 1.7 s cannot let it go; the quiet windows they watch are 1.5 TTLs.
const OFTEN = { touchScheduleFactor: 8 };
const QUIET_MS = 3_000;

describe('PersistentTtlNode', () => {
  const nodes: PersistentTtlNode[] = [];
  let path: string;

  const zk = useZooKeeper({ beforeClose: () => Promise.all(nodes.splice(0).map((n) => n.close())) });
  beforeEach(() => {
    path = `${randomRoot('ttl')}/test`;
  });

  const connect = () => zk.clients.connect({ connectString: zk.server.connectString });
  const started = (client: ZkClient, p = path, options: Partial<ConstructorParameters<typeof PersistentTtlNode>[2]> = {}) => {
    const node = new PersistentTtlNode(client, p, { ttlMs: TTL_MS, ...options });
    nodes.push(node);
    node.start();
    return node;
  };

  // Curator's testBasic.
  it('lives while it is touched, and goes about its TTL after close()', async () => {
    const client = await connect();
    const node = started(client, path, { data: 'x', ...OFTEN });
    await node.waitForInitialCreate({ timeoutMs: timing(10_000) });
    await eventually('the touch node', async () => (await client.exists(node.childPath)) !== null);
    // No deletion for longer than a TTL: the touches keep it.
    const watched = await watchNode(client, path, QUIET_MS);
    await expect(watched.next).rejects.toThrow(/no an event on/);
    expect((await client.getData(path)).data.toString()).toBe('x');
    const gone = await watchNode(client, path, timing(10_000));
    await node.close();
    expect(await gone.next).toBe('deleted');
  });

  // Curator's testForcedDeleteOfTouchNode.
  it('a deleted touch node is created again, and the node stays', async () => {
    const client = await connect();
    const node = started(client, path, OFTEN);
    await node.waitForInitialCreate({ timeoutMs: timing(10_000) });
    for (let i = 0; i < 3; i++) {
      await eventually('the touch node', async () => (await client.exists(node.childPath)) !== null);
      await client.delete(node.childPath, { quietly: true });
    }
    await eventually('the touch node again', async () => (await client.exists(node.childPath)) !== null);
    expect(await client.exists(path)).not.toBeNull();
  });

  // Curator's testEventsOnParent: touches make no noise on the node itself.
  it("touching fires no watch on the node; a change of the node's own data does", async () => {
    const client = await connect();
    const other = await connect();
    const node = started(client, path, OFTEN);
    await node.waitForInitialCreate({ timeoutMs: timing(10_000) });
    await eventually('the touch node', async () => (await client.exists(node.childPath)) !== null);
    const quiet = await watchNode(other, path, QUIET_MS);
    await expect(quiet.next).rejects.toThrow(/no an event on/);
    const changed = await watchNode(other, path);
    await client.setData(path, 'changed');
    expect(await changed.next).toBe('changed');
  });

  // Curator's testTouchNodeNotCreated (#1258): a node whose child was never touched still goes.
  it('closed before its first touch, the node still goes after its TTL', async () => {
    const client = await connect();
    const node = started(client, path, { touchScheduleFactor: 1 });
    await node.waitForInitialCreate({ timeoutMs: timing(10_000) });
    const gone = await watchNode(client, path, timing(10_000));
    expect(gone.existed).toBe(true);
    await node.close();
    expect(await client.exists(node.childPath)).toBeNull();
    expect(await gone.next).toBe('deleted');
  });

  // Curator's testRecreationOfParentNodeWithParentCreationOff.
  it('without parent creation, a deleted parent keeps both nodes away', async () => {
    const client = await connect();
    const other = await connect();
    await client.ensurePath(`${path}/one`);
    const node = started(client, `${path}/one/two`, { createParents: false, data: 'hey' });
    await node.waitForInitialCreate({ timeoutMs: timing(10_000) });
    await eventually('the touch node', async () => (await client.exists(node.childPath)) !== null);
    const deleted = await watchNode(other, `${path}/one`);
    await other.delete(`${path}/one`, { recursive: true });
    expect(await deleted.next).toBe('deleted');
    const stays = await watchNode(other, `${path}/one/two`, QUIET_MS);
    await expect(stays.next).rejects.toThrow(/no an event on/);
    expect(node.getData().toString()).toBe('hey');
  });

  it('refuses bad input', () => {
    const client = new ZkClient({ connectString: zk.server.connectString });
    expect(() => new PersistentTtlNode(client, path, { ttlMs: 0 })).toThrow(InvalidArgumentError);
    expect(() => new PersistentTtlNode(client, path, {} as never)).toThrow(InvalidArgumentError);
    expect(() => new PersistentTtlNode(client, path, { ttlMs: 2 ** 31 })).toThrow(InvalidArgumentError);
    expect(() => new PersistentTtlNode(client, path, { ttlMs: 10, childNodeName: '' })).toThrow(InvalidArgumentError);
    expect(() => new PersistentTtlNode(client, path, { ttlMs: 10, touchScheduleFactor: 0 })).toThrow(InvalidArgumentError);
  });
});
