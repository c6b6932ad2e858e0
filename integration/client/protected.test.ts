import { randomUUID } from 'node:crypto';
import { isProtectedName } from '../../src/client/protection';
import { FaultProxy } from '../../src/testing';
import { eventually, randomRoot, timing } from '../helpers';
import { useZooKeeper } from '../fixture';

describe('ZkClient protected creates', () => {
  const zk = useZooKeeper();

  it('names the node _c_<uuid>-<name>, the way Curator does', async () => {
    const root = randomRoot();
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const p = await client.create(`${root}/lock-`, { mode: 'EPHEMERAL_SEQUENTIAL', protected: true, createParents: 'container' });
    const name = p.slice(root.length + 1);
    expect(name).toMatch(/^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-\d{10}$/);
    expect(isProtectedName(name)).toBe(true);
  });

  it.each(['EPHEMERAL_SEQUENTIAL', 'PERSISTENT'] as const)(
    'a %s create whose reply is lost leaves exactly one node, ours',
    async (mode) => {
      const root = randomRoot();
      const observer = await zk.clients.connect({ connectString: zk.server.connectString });
      await observer.create(root);
      await using proxy = await FaultProxy.start(zk.server.connectString);
      const client = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 30_000, connectionTimeoutMs: timing(20_000) });
      const session = client.sessionId;

      // Requests and replies now crawl through the proxy: the create reaches the server, and its
      // reply is still in the proxy when we cut the connection.
      proxy.delay(timing(400));
      const name = mode === 'PERSISTENT' ? `node-${randomUUID()}` : 'lock-';
      const pending = client.create(`${root}/${name}`, { mode, protected: true });
      const onServer = await eventually('the node on the server', async () => {
        const children = await observer.getChildren(root);
        return children.length === 1 ? children[0] : undefined;
      });
      proxy.cut();
      proxy.delay(0);
      proxy.heal();

      const created = await pending;
      expect(created).toBe(`${root}/${onServer}`);
      expect(await observer.getChildren(root)).toEqual([onServer]);
      if (mode === 'EPHEMERAL_SEQUENTIAL') {
        expect((await observer.exists(created))?.ephemeralOwner).toBe(session);
        expect(client.sessionId).toBe(session);
      }
    },
  );
});
