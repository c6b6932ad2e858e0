import { ServiceDiscovery, ServiceInstanceFormatError, createServiceInstance, type ServiceInstance } from '../../../recipes/discovery';
import { IllegalStateError, InvalidArgumentError, ZkClient, isZkError } from '../../../src';
import { expireSession } from '../../../src/testing';
import { StateRecorder, eventually, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';

describe('ServiceDiscovery', () => {
  const discoveries: ServiceDiscovery[] = [];
  let base: string;

  const zk = useZooKeeper({ beforeClose: () => Promise.all(discoveries.splice(0).map((d) => d.close())) });
  beforeEach(() => {
    base = `${randomRoot('discovery')}/services`;
  });

  const discovery = async (client: ZkClient) => {
    const d = new ServiceDiscovery(client, base);
    discoveries.push(d);
    await d.start();
    return d;
  };
  const ids = (instances: ServiceInstance[]) => instances.map((i) => i.id).sort();

  it('registers, finds, updates and unregisters instances under <base>/<name>/<id>', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const other = await zk.clients.connect({ connectString: zk.server.connectString });
    const ours = await discovery(client);
    const theirs = await discovery(other);
    expect(await theirs.queryForNames()).toEqual([]);
    expect(await theirs.queryForInstances('api')).toEqual([]);

    const a = createServiceInstance({ name: 'api', id: 'a', port: 8080, payload: { region: 'eu' }, uriSpec: '{scheme}://{address}:{port}' });
    const s = createServiceInstance({ name: 'api', id: 's', serviceType: 'STATIC' });
    const b = createServiceInstance({ name: 'billing', id: 'b' });
    await ours.registerService(a);
    await ours.registerService(s);
    await ours.registerService(b);
    expect((await theirs.queryForNames()).sort()).toEqual(['api', 'billing']);
    expect(ids(await theirs.queryForInstances('api'))).toEqual(['a', 's']);
    const found = await theirs.queryForInstance('api', 'a');
    expect(found).toMatchObject({ name: 'api', id: 'a', port: 8080, address: a.address, payload: { '@class': 'java.util.LinkedHashMap', region: 'eu' } });
    expect(found?.uriSpec?.build(found)).toBe(`http://${a.address}:8080`);
    expect((await client.exists(`${base}/api/a`))?.ephemeralOwner).toBe(client.sessionId);
    expect((await client.exists(`${base}/api/s`))?.ephemeralOwner).toBe(0n);

    await ours.updateService({ ...a, port: 9090 });
    expect((await theirs.queryForInstance('api', 'a'))?.port).toBe(9090);
    await expect(ours.updateService(createServiceInstance({ name: 'api', id: 'nope' }))).rejects.toThrow(IllegalStateError);

    await ours.unregisterService(a);
    expect(await theirs.queryForInstance('api', 'a')).toBeNull();
    expect(ids(await theirs.queryForInstances('api'))).toEqual(['s']);
    await ours.close();
    expect(await theirs.queryForInstances('api')).toEqual([]);
    expect(await theirs.queryForInstances('billing')).toEqual([]);
  });

  it('a DYNAMIC_SEQUENTIAL instance gets a number after its id', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const d = await discovery(client);
    await d.registerService(createServiceInstance({ name: 'worker', id: 'w-', serviceType: 'DYNAMIC_SEQUENTIAL' }));
    const [instance] = await d.queryForInstances('worker');
    expect(instance.id).toBe('w-');
    expect(await client.getChildren(`${base}/worker`)).toEqual([expect.stringMatching(/^w-\d{10}$/)]);
    await d.unregisterService('w-');
    expect(await childrenOrNone(client, `${base}/worker`)).toEqual([]);
  });

  it("a DYNAMIC instance's session expires: it is registered again in the new session, with its latest data", async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const watcher = await zk.clients.connect({ connectString: zk.server.connectString });
    const states = new StateRecorder(client);
    const ours = await discovery(client);
    const theirs = await discovery(watcher);
    const a = createServiceInstance({ name: 'api', id: 'a', port: 1 });
    await ours.registerService(a);
    await ours.updateService({ ...a, port: 2 });
    const oldSession = client.sessionId;
    const mark = states.mark();
    await expireSession(client);
    await states.waitFor('LOST', mark);
    await states.waitFor('RECONNECTED', mark);
    const back = await eventually('the instance to be back in the new session', async () => {
      const stat = await watcher.exists(`${base}/api/a`);
      return stat !== null && stat.ephemeralOwner === client.sessionId && stat.ephemeralOwner !== oldSession ? stat : undefined;
    });
    expect(back.ephemeralOwner).toBe(client.sessionId);
    expect((await theirs.queryForInstance('api', 'a'))?.port).toBe(2);
  });

  it('refuses bad input before any I/O and reads a foreign node as a typed error', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    expect(() => new ServiceDiscovery(client, 'relative')).toThrow(InvalidArgumentError);
    const latent = new ServiceDiscovery(client, base);
    await expect(latent.registerService(createServiceInstance({ name: 'api' }))).rejects.toThrow(IllegalStateError);
    const d = await discovery(client);
    await expect(d.registerService({ ...createServiceInstance({ name: 'api' }), payload: 'text' as never })).rejects.toThrow(InvalidArgumentError);
    await expect(d.queryForInstances('a/b')).rejects.toThrow(InvalidArgumentError);
    await expect(d.registerService(createServiceInstance({ name: 'api' }), { timeoutMs: -1 })).rejects.toThrow(InvalidArgumentError);
    expect(await client.exists(base)).toBeNull();
    await client.create(`${base}/junk/x`, { data: 'not json', createParents: 'persistent' });
    await expect(d.queryForInstances('junk')).rejects.toThrow(ServiceInstanceFormatError);
    await d.close();
    await expect(d.registerService(createServiceInstance({ name: 'api' }))).rejects.toThrow(IllegalStateError);
  });

  it('close() while disconnected returns in time and its deletes finish once connected again', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const d = await discovery(client);
    await d.registerService(createServiceInstance({ name: 'api', id: 'static', serviceType: 'STATIC' }));
    await d.registerService(createServiceInstance({ name: 'api', id: 'dynamic' }));
    const states = new StateRecorder(client);
    const mark = states.mark();
    await zk.server.stop();
    try {
      await states.waitFor('SUSPENDED', mark);
      const started = Date.now();
      await d.close();
      // Bounded by about a second; the margin is for a loaded machine, far below a hang.
      expect(Date.now() - started).toBeLessThan(timing(5_000));
    } finally {
      await zk.server.start();
    }
    const watcher = await zk.clients.connect({ connectString: zk.server.connectString });
    await eventually('the instances deleted once connected again', async () => (await childrenOrNone(watcher, `${base}/api`)).length === 0 || undefined);
  });

  it('a registration that times out leaves no node behind', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const d = await discovery(client);
    // Disconnected, the create cannot happen within the wait.
    await zk.server.stop();
    try {
      const started = Date.now();
      await expect(d.registerService(createServiceInstance({ name: 'api', id: 'late' }), { timeoutMs: timing(500) })).rejects.toMatchObject({ code: 'PERSISTENT_NODE_TIMEOUT' });
      // The wait is bounded by its timeout (a margin for a loaded machine, far below a hang).
      expect(Date.now() - started).toBeLessThan(timing(500) + timing(5_000));
      for (const [what, call] of [
        ['a STATIC registration', () => d.registerService(createServiceInstance({ name: 'api', id: 'late-static', serviceType: 'STATIC' }), { timeoutMs: timing(500) })],
        ['a query', () => d.queryForInstances('api', { timeoutMs: timing(500) })],
      ] as const) {
        const t0 = Date.now();
        await expect(call()).rejects.toMatchObject({ name: 'TimeoutError', code: 'TIMEOUT' });
        expect({ what, ms: Date.now() - t0 < timing(500) + timing(5_000) }).toEqual({ what, ms: true });
      }
    } finally {
      await zk.server.start();
    }
    const watcher = await zk.clients.connect({ connectString: zk.server.connectString });
    expect(await d.queryForInstances('api')).toEqual([]);
    expect(await watcher.exists(`${base}/api/late`)).toBeNull();
    expect(await watcher.exists(`${base}/api/late-static`)).toBeNull();
  });
});

/** A service's instances; none once the server has reaped its node, a container that emptied. */
function childrenOrNone(client: ZkClient, path: string): Promise<string[]> {
  return client.getChildren(path).catch((err: unknown) => (isZkError(err, 'NONODE') ? [] : Promise.reject(err)));
}
