import { JsonInstanceSerializer, ServiceDiscovery, createServiceInstance, type ServiceCache, type ServiceInstance, type ServiceProvider } from '../../recipes/discovery';
import type { ZkClient } from '../../src';
import { FaultProxy, TestingServer, expireSession } from '../../src/testing';
import { Clients, StateRecorder, eventually, randomRoot, timing } from '../helpers';
import { CuratorPeer } from './CuratorPeer';

/** The peer's payload class, which Curator's Jackson instantiates from the @class property. */
const DETAILS_CLASS = 'zkrecipes.interop.CuratorPeer$ServiceDetails';

interface CuratorInstance {
  found: boolean;
  instanceId: string;
  address: string | null;
  port: number | null;
  sslPort: number | null;
  serviceType: string;
  enabled: boolean;
  registrationTimeUTC: number;
  uri: string | null;
  description: string | null;
  weight: number | null;
  json: string;
}

describe("ServiceDiscovery with Curator 5.4's curator-x-discovery on the same base path", () => {
  let server: TestingServer;
  let peer: CuratorPeer;
  const clients = new Clients();
  const discoveries: ServiceDiscovery[] = [];
  let client: ZkClient;
  let base: string;
  const serializer = new JsonInstanceSerializer({ payloadClass: DETAILS_CLASS });

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    peer = await CuratorPeer.start(server.connectString, { label: 'curator-discovery' });
  });
  beforeEach(async () => {
    base = `${randomRoot('interop-discovery')}/services`;
    client = await clients.connect({ connectString: server.connectString });
    await peer.request('discovery.new', { name: 'd', basePath: base });
  });
  afterEach(async () => {
    await Promise.all(discoveries.splice(0).map((d) => d.close()));
    for (const name of ['p', 'c', 'd']) await peer.request('forget', { name });
    await clients.closeAll();
  });
  afterAll(async () => {
    await peer?.close();
    await server?.close();
  });

  const discovery = async (on: ZkClient = client) => {
    const d = new ServiceDiscovery(on, base, { serializer });
    discoveries.push(d);
    await d.start();
    return d;
  };
  const curatorQuery = (service: string, id: string) => peer.request<CuratorInstance>('discovery.queryForInstance', { name: 'd', service, instanceId: id });

  it('writes the bytes Curator writes for the same instance, in both serialization modes', async () => {
    const fields = { service: 'api', instanceId: 'golden', address: '10.1.2.3', port: 8080, sslPort: 8443, uriSpec: '{scheme}://{address}:{port}/v1', registrationTimeUTC: 1_700_000_000_123 };
    const instance = createServiceInstance({
      name: 'api',
      id: 'golden',
      address: '10.1.2.3',
      port: 8080,
      sslPort: 8443,
      uriSpec: '{scheme}://{address}:{port}/v1',
      registrationTimeUTC: 1_700_000_000_123,
      payload: { description: 'ünïcode "quoted" \\ \t tab', weight: 7 },
      enabled: false,
    });
    for (const compatible of [true, false]) {
      const curator = await peer.request<{ json: string }>('discovery.serialize', { name: 'd', ...fields, description: 'ünïcode "quoted" \\ \t tab', weight: 7, enabled: false, compatible });
      const ours = new JsonInstanceSerializer({ payloadClass: DETAILS_CLASS, compatibleSerializationMode: compatible }).serialize(instance);
      expect(ours.toString('utf8')).toBe(curator.json);
    }
  });

  it('a Java service registers and Node finds it, its payload with @class; Curator unregisters it and Node sees it go', async () => {
    await peer.request('discovery.register', { name: 'd', service: 'billing', instanceId: 'java-1', address: '10.0.0.9', port: 9000, uriSpec: '{scheme}://{address}:{port}', description: 'from java', weight: 3 });
    const d = await discovery();
    expect(await d.queryForNames()).toEqual(['billing']);
    const [found] = await d.queryForInstances('billing');
    expect(found).toMatchObject({ name: 'billing', id: 'java-1', address: '10.0.0.9', port: 9000, sslPort: null, serviceType: 'DYNAMIC', enabled: true });
    expect(found.payload).toEqual({ '@class': DETAILS_CLASS, description: 'from java', weight: 3 });
    expect(found.uriSpec?.build(found)).toBe('http://10.0.0.9:9000');
    // The node holds Curator's bytes, and ours are the same for what we read.
    const { data, stat } = await client.getData(`${base}/billing/java-1`);
    expect(serializer.serialize(found).equals(data)).toBe(true);
    expect(stat.ephemeralOwner).not.toBe(0n);

    await peer.request('discovery.unregister', { name: 'd', service: 'billing', instanceId: 'java-1' });
    expect(await d.queryForInstance('billing', 'java-1')).toBeNull();
    expect(await d.queryForInstances('billing')).toEqual([]);
  });

  it("a Node service registers and Curator finds it and reads its payload into its Java class; Node unregisters it and Curator sees it go", async () => {
    const d = await discovery();
    const instance = createServiceInstance({ name: 'api', id: 'node-1', port: 8080, sslPort: 8443, uriSpec: '{scheme}://{address}:{ssl-port}', payload: { description: 'from node', weight: 5 } });
    await d.registerService(instance);
    expect(await peer.request('discovery.queryForNames', { name: 'd' })).toMatchObject({ names: ['api'] });
    expect(await peer.request('discovery.queryForInstances', { name: 'd', service: 'api' })).toMatchObject({ ids: ['node-1'] });
    const seen = await curatorQuery('api', 'node-1');
    expect(seen).toMatchObject({
      found: true,
      instanceId: 'node-1',
      address: instance.address,
      port: 8080,
      sslPort: 8443,
      serviceType: 'DYNAMIC',
      enabled: true,
      registrationTimeUTC: instance.registrationTimeUTC,
      uri: `https://${instance.address}:8443`,
      description: 'from node',
      weight: 5,
    });
    // What Curator writes back for what it read is what we wrote.
    expect(seen.json).toBe((await client.getData(`${base}/api/node-1`)).data.toString('utf8'));

    await d.updateService({ ...instance, payload: { description: 'updated', weight: 6 } });
    expect(await curatorQuery('api', 'node-1')).toMatchObject({ description: 'updated', weight: 6 });

    await d.unregisterService(instance);
    expect(await curatorQuery('api', 'node-1')).toMatchObject({ found: false });
    expect(await peer.request('discovery.queryForInstances', { name: 'd', service: 'api' })).toMatchObject({ ids: [] });
  });

  it("a Node instance's session expires: Curator sees it go and come back in the new session", async () => {
    const expiring = await clients.connect({ connectString: server.connectString });
    const states = new StateRecorder(expiring);
    const d = await discovery(expiring);
    await d.registerService(createServiceInstance({ name: 'api', id: 'phoenix', port: 1, payload: { description: 'me', weight: 1 } }));
    expect(await curatorQuery('api', 'phoenix')).toMatchObject({ found: true });
    const oldSession = expiring.sessionId;
    const mark = states.mark();
    await expireSession(expiring);
    await states.waitFor('LOST', mark);
    await states.waitFor('RECONNECTED', mark);
    await eventually('the instance back in the new session', async () => {
      const stat = await client.exists(`${base}/api/phoenix`);
      return stat !== null && stat.ephemeralOwner !== oldSession && stat.ephemeralOwner === expiring.sessionId;
    });
    expect(await curatorQuery('api', 'phoenix')).toMatchObject({ found: true, description: 'me', weight: 1 });
  });

  it('a Java STATIC instance and a Node PERMANENT one are persistent nodes, each read by the other side', async () => {
    await peer.request('discovery.register', { name: 'd', service: 'static', instanceId: 'j', serviceType: 'STATIC', port: 1 });
    const d = await discovery();
    expect(await d.queryForInstance('static', 'j')).toMatchObject({ serviceType: 'STATIC', payload: null });
    expect((await client.exists(`${base}/static/j`))?.ephemeralOwner).toBe(0n);
    await d.registerService(createServiceInstance({ name: 'static', id: 'n', serviceType: 'PERMANENT' }));
    expect(await curatorQuery('static', 'n')).toMatchObject({ found: true, serviceType: 'PERMANENT', description: null });
    await peer.request('discovery.unregister', { name: 'd', service: 'static', instanceId: 'j' });
  });

  /** Resolves once Curator's ServiceCache 'c' reports a change to exactly `ids` (after `since`). */
  const curatorCacheChangedTo = (ids: string[], since: number) =>
    peer.waitForEvent((e) => e.event === 'serviceCacheChanged' && e.name === 'c' && JSON.stringify(e.ids) === JSON.stringify(ids), { since });
  /** Resolves once our cache holds exactly `ids`. */
  const cacheHolds = (cache: ServiceCache, ids: string[], what = 'the cache') =>
    new Promise<void>((resolve, reject) => {
      const same = (l: ServiceInstance[]) => JSON.stringify(l.map((i) => i.id)) === JSON.stringify(ids);
      if (same(cache.getInstances())) return resolve();
      const timer = setTimeout(() => reject(new Error(`${what} never held ${JSON.stringify(ids)}`)), timing(20_000));
      const listener = (l: ServiceInstance[]) => {
        if (!same(l)) return;
        clearTimeout(timer);
        cache.off('changed', listener);
        resolve();
      };
      cache.on('changed', listener);
    });
  /** Resolves once our provider's cache holds exactly `ids`. */
  const providerHolds = (provider: ServiceProvider, ids: string[]) => cacheHolds(provider.cache, ids, 'the provider');

  it("a Java service registers and a Node ServiceProvider picks it, payload included; Curator unregisters it and the provider's cache drops it", async () => {
    const d = await discovery();
    const provider = d.serviceProvider('billing');
    await provider.start({ timeoutMs: timing(20_000) });
    expect(provider.getInstance()).toBeNull();
    const seen = providerHolds(provider, ['java-1']);
    await peer.request('discovery.register', { name: 'd', service: 'billing', instanceId: 'java-1', address: '10.0.0.9', port: 9000, uriSpec: '{scheme}://{address}:{port}', description: 'from java', weight: 3 });
    await seen;
    const picked = provider.getInstance();
    expect(picked).toMatchObject({ id: 'java-1', address: '10.0.0.9', port: 9000, payload: { '@class': DETAILS_CLASS, description: 'from java', weight: 3 } });
    expect(picked?.uriSpec?.build(picked)).toBe('http://10.0.0.9:9000');

    const gone = providerHolds(provider, []);
    await peer.request('discovery.unregister', { name: 'd', service: 'billing', instanceId: 'java-1' });
    await gone;
    expect(provider.getInstance()).toBeNull();
  });

  it("a Node service registers and Curator's ServiceProvider picks it and reads its payload; Node unregisters and Curator's ServiceCache sees it go", async () => {
    await peer.request('discovery.cache.new', { name: 'c', discovery: 'd', service: 'api' });
    const d = await discovery();
    const instance = createServiceInstance({ name: 'api', id: 'node-1', port: 8080, uriSpec: '{scheme}://{address}:{port}', payload: { description: 'from node', weight: 5 } });
    const since = peer.mark();
    await d.registerService(instance);
    await curatorCacheChangedTo(['node-1'], since);
    await peer.request('discovery.provider.new', { name: 'p', discovery: 'd', service: 'api' });
    expect(await peer.request('discovery.provider.getInstance', { name: 'p' })).toMatchObject({
      found: true,
      instanceId: 'node-1',
      address: instance.address,
      port: 8080,
      uri: `http://${instance.address}:8080`,
      description: 'from node',
      weight: 5,
    });

    const before = peer.mark();
    await d.unregisterService(instance);
    await curatorCacheChangedTo([], before);
    // The provider has a cache of its own, which hears the delete in its own time.
    await eventually("Curator's provider without the instance", async () => (await peer.request<{ ids: string[] }>('discovery.provider.allIds', { name: 'p' })).ids.length === 0);
    expect(await peer.request('discovery.provider.getInstance', { name: 'p' })).toMatchObject({ found: false });
  });

  it("a Node instance's session expires: Curator's ServiceCache sees it go and come back", async () => {
    await peer.request('discovery.cache.new', { name: 'c', discovery: 'd', service: 'api' });
    const expiring = await clients.connect({ connectString: server.connectString });
    const states = new StateRecorder(expiring);
    const d = await discovery(expiring);
    const since = peer.mark();
    await d.registerService(createServiceInstance({ name: 'api', id: 'phoenix', payload: { description: 'me', weight: 1 } }));
    await curatorCacheChangedTo(['phoenix'], since);
    const mark = states.mark();
    const expiry = peer.mark();
    await expireSession(expiring);
    await curatorCacheChangedTo([], expiry);
    await states.waitForNewSession(mark);
    await curatorCacheChangedTo(['phoenix'], expiry);
    expect(await peer.request('discovery.cache.ids', { name: 'c' })).toMatchObject({ ids: ['phoenix'] });
  });

  it('a Java instance marked down by noteError in Curator, and a Node one in ours: each provider moves to the other instance', async () => {
    await peer.request('discovery.register', { name: 'd', service: 'mixed', instanceId: 'java', port: 1, description: 'j', weight: 1 });
    const d = await discovery();
    await d.registerService(createServiceInstance({ name: 'mixed', id: 'node', port: 2, payload: { description: 'n', weight: 2 } }));
    const provider = d.serviceProvider('mixed');
    await provider.start({ timeoutMs: timing(20_000) });
    await providerHolds(provider, ['java', 'node']);
    const java = provider.getAllInstances()[0];
    provider.noteError(java);
    provider.noteError(java);
    expect(Array.from({ length: 3 }, () => provider.getInstance()?.id)).toEqual(['node', 'node', 'node']);

    await peer.request('discovery.provider.new', { name: 'p', discovery: 'd', service: 'mixed' });
    expect(await peer.request('discovery.provider.allIds', { name: 'p' })).toMatchObject({ ids: ['java', 'node'] });
    for (let i = 0; i < 2; i++) await peer.request('discovery.provider.noteError', { name: 'p', instanceId: 'node' });
    expect(await peer.request('discovery.provider.allIds', { name: 'p' })).toMatchObject({ ids: ['java'] });
    expect(await peer.request('discovery.provider.getInstance', { name: 'p' })).toMatchObject({ instanceId: 'java', description: 'j' });
  });

  it("a partition longer than the session: our provider keeps picking from its last list, and catches up with Curator's changes once healed", async () => {
    await using proxy = await FaultProxy.start(server.connectString);
    const cut = await clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 4_000 });
    const states = new StateRecorder(cut);
    await peer.request('discovery.register', { name: 'd', service: 'billing', instanceId: 'j1', port: 1, description: 'one', weight: 1 });
    const provider = (await discovery(cut)).serviceProvider('billing');
    await provider.start({ timeoutMs: timing(20_000) });
    expect(provider.getInstance()?.id).toBe('j1');
    const mark = states.mark();
    proxy.blackhole();
    await peer.request('discovery.unregister', { name: 'd', service: 'billing', instanceId: 'j1' });
    await peer.request('discovery.register', { name: 'd', service: 'billing', instanceId: 'j2', port: 2, description: 'two', weight: 2 });
    await states.waitFor('LOST', mark);
    expect(provider.getInstance()?.id).toBe('j1');
    const caughtUp = providerHolds(provider, ['j2']);
    proxy.heal();
    await caughtUp;
    expect(provider.getInstance()).toMatchObject({ id: 'j2', port: 2, payload: { '@class': DETAILS_CLASS, description: 'two', weight: 2 } });
  });

  it("the server restarts: a Node instance whose session ended meanwhile is back for Curator's ServiceCache and ServiceProvider", async () => {
    await peer.request('discovery.cache.new', { name: 'c', discovery: 'd', service: 'api' });
    const node = await clients.connect({ connectString: server.connectString, sessionTimeoutMs: 4_000 });
    const states = new StateRecorder(node);
    const d = await discovery(node);
    const since = peer.mark();
    await d.registerService(createServiceInstance({ name: 'api', id: 'n', port: 7, payload: { description: 'back', weight: 7 } }));
    await curatorCacheChangedTo(['n'], since);
    const oldSession = node.sessionId;
    const mark = states.mark();
    await server.stop();
    try {
      await states.waitFor('LOST', mark);
    } finally {
      await server.start();
    }
    await states.waitFor('RECONNECTED', mark);
    await eventually('n in the new session', async () => {
      const owner = (await client.exists(`${base}/api/n`))?.ephemeralOwner;
      return owner !== undefined && owner !== oldSession && owner === node.sessionId;
    });
    await eventually("Curator's cache holding n", async () => (await peer.request<{ ids: string[] }>('discovery.cache.ids', { name: 'c' })).ids.join() === 'n');
    await peer.request('discovery.provider.new', { name: 'p', discovery: 'd', service: 'api' });
    expect(await peer.request('discovery.provider.getInstance', { name: 'p' })).toMatchObject({ found: true, instanceId: 'n', port: 7, description: 'back', weight: 7 });
  });

  /** A second JVM whose client reaches the server only through `proxy`, so that it alone can be partitioned. */
  const peerBehind = async (proxy: FaultProxy, sessionTimeoutMs: number) => {
    const java = await CuratorPeer.start(proxy.connectString, { label: 'curator-discovery-partitioned', sessionTimeoutMs });
    await java.request('discovery.new', { name: 'd', basePath: base });
    return java;
  };
  const sessionOf = async (java: CuratorPeer) => BigInt(`0x${(await java.request<{ sessionId: string }>('session')).sessionId}`);

  it("Curator's client partitioned longer than its session: our ServiceCache and ServiceProvider see its instance go as the server expires the session, and come back as Curator registers it again in a new one", async () => {
    await using proxy = await FaultProxy.start(server.connectString);
    await using java = await peerBehind(proxy, 6_000);
    await java.request('discovery.register', { name: 'd', service: 'billing', instanceId: 'j', address: '10.0.0.7', port: 7000, description: 'partitioned', weight: 4 });
    const d = await discovery();
    const cache = d.serviceCache('billing');
    await cache.start({ timeoutMs: timing(20_000) });
    const provider = d.serviceProvider('billing');
    await provider.start({ timeoutMs: timing(20_000) });
    expect(cache.getInstances().map((i) => i.id)).toEqual(['j']);
    expect(provider.getInstance()?.id).toBe('j');
    const path = `${base}/billing/j`;
    const oldSession = await sessionOf(java);
    expect((await client.exists(path))?.ephemeralOwner).toBe(oldSession);

    const mark = java.mark();
    const gone = Promise.all([cacheHolds(cache, [], 'our cache'), providerHolds(provider, [])]);
    proxy.blackhole();
    // The server ends the session (and deletes its node) on its clock, Curator declares it LOST on
    // its own: both happen, in either order, and the instance stays away until the heal.
    await Promise.all([gone, java.waitForEvent({ event: 'state', state: 'LOST' }, { since: mark, timeoutMs: timing(40_000) })]);
    expect(await client.exists(path)).toBeNull();
    expect(provider.getInstance()).toBeNull();

    const back = Promise.all([cacheHolds(cache, ['j'], 'our cache'), providerHolds(provider, ['j'])]);
    proxy.heal();
    await Promise.all([back, java.waitForEvent({ event: 'state', state: 'RECONNECTED' }, { since: mark, timeoutMs: timing(40_000) })]);
    const newSession = await sessionOf(java);
    expect(newSession).not.toBe(oldSession);
    expect((await client.exists(path))?.ephemeralOwner).toBe(newSession);
    expect(provider.getInstance()).toMatchObject({ id: 'j', address: '10.0.0.7', port: 7000, payload: { '@class': DETAILS_CLASS, description: 'partitioned', weight: 4 } });
    expect(cache.getInstances()).toEqual([provider.getInstance()]);
  });

  it("Curator's ServiceCache and ServiceProvider keep their last list through a short partition of their client, then catch up with what Node registered and unregistered meanwhile", async () => {
    await using proxy = await FaultProxy.start(server.connectString);
    // A session much longer than the partition: the point is a reconnect in the same session.
    await using java = await peerBehind(proxy, 20_000);
    const d = await discovery();
    const first = createServiceInstance({ name: 'api', id: 'n1', port: 1, payload: { description: 'first', weight: 1 } });
    await d.registerService(first);
    await java.request('discovery.cache.new', { name: 'c', discovery: 'd', service: 'api' });
    await java.request('discovery.provider.new', { name: 'p', discovery: 'd', service: 'api' });
    expect(await java.request('discovery.cache.ids', { name: 'c' })).toMatchObject({ ids: ['n1'] });
    const session = await sessionOf(java);

    const mark = java.mark();
    proxy.cut();
    await java.waitForEvent({ event: 'state', state: 'SUSPENDED' }, { since: mark });
    await d.registerService(createServiceInstance({ name: 'api', id: 'n2', port: 2, payload: { description: 'second', weight: 2 } }));
    await d.unregisterService(first);
    // Cut off, Curator cannot have heard of either change: it serves the list it had.
    expect(await java.request('discovery.cache.ids', { name: 'c' })).toMatchObject({ ids: ['n1'] });
    expect(await java.request('discovery.provider.getInstance', { name: 'p' })).toMatchObject({ found: true, instanceId: 'n1', description: 'first' });

    const healed = java.mark();
    const caughtUp = java.waitForEvent((e) => e.event === 'serviceCacheChanged' && e.name === 'c' && JSON.stringify(e.ids) === '["n2"]', { since: healed, timeoutMs: timing(40_000) });
    proxy.heal();
    await Promise.all([caughtUp, java.waitForEvent({ event: 'state', state: 'RECONNECTED' }, { since: mark, timeoutMs: timing(40_000) })]);
    expect(java.eventLog.slice(mark, healed).filter((e) => e.event === 'serviceCacheChanged')).toEqual([]);
    expect(java.eventLog.slice(mark).filter((e) => e.event === 'state').map((e) => e.state)).not.toContain('LOST');
    expect(await sessionOf(java)).toBe(session);
    await eventually("Curator's provider holding only n2", async () => (await java.request<{ ids: string[] }>('discovery.provider.allIds', { name: 'p' })).ids.join() === 'n2');
    expect(await java.request('discovery.provider.getInstance', { name: 'p' })).toMatchObject({ found: true, instanceId: 'n2', port: 2, description: 'second', weight: 2 });
  });
});
