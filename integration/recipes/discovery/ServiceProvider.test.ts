import {
  DOWN_INSTANCE_POLICY_DEFAULTS,
  JsonInstanceSerializer,
  RandomStrategy,
  RoundRobinStrategy,
  ServiceDiscovery,
  StickyStrategy,
  createServiceInstance,
  type ServiceDiscoveryOptions,
  type ServiceInstance,
  type ServiceProvider,
} from '../../../recipes/discovery';
import { InvalidArgumentError, type ZkClient } from '../../../src';
import { expireSession } from '../../../src/testing';
import { StateRecorder, eventually, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';

const ids = (instances: readonly ServiceInstance[]) => instances.map((i) => i.id);

/** Resolves once the provider's cache reports a list that `accept` takes (or holds one now); rejects after a bounded wait. */
function cacheHolds(provider: ServiceProvider, accept: (ids: string[]) => boolean, what: string, timeoutMs = timing(20_000)): Promise<void> {
  if (accept(ids(provider.cache.getInstances()))) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      provider.cache.off('changed', listener);
      reject(new Error(`no ${what} within ${timeoutMs} ms; the cache holds ${JSON.stringify(ids(provider.cache.getInstances()))}`));
    }, timeoutMs);
    const listener = (instances: ServiceInstance[]) => {
      if (!accept(ids(instances))) return;
      clearTimeout(timer);
      provider.cache.off('changed', listener);
      resolve();
    };
    provider.cache.on('changed', listener);
  });
}

describe('ServiceProvider', () => {
  const discoveries: ServiceDiscovery[] = [];
  let base: string;

  const zk = useZooKeeper({ beforeClose: () => Promise.all(discoveries.splice(0).map((d) => d.close())) });
  beforeEach(() => {
    base = `${randomRoot('discovery-provider')}/services`;
  });

  const discovery = async (client?: ZkClient, options: ServiceDiscoveryOptions = {}) => {
    const d = new ServiceDiscovery(client ?? (await zk.clients.connect({ connectString: zk.server.connectString })), base, options);
    discoveries.push(d);
    await d.start();
    return d;
  };
  /** Registers instances a, b, c of 'api' and returns a started provider of it. */
  const providerOf3 = async (options: Parameters<ServiceDiscovery['serviceProvider']>[1] = {}) => {
    const registrant = await discovery();
    for (const id of ['a', 'b', 'c']) await registrant.registerService(createServiceInstance({ name: 'api', id, port: 8000 }));
    const provider = (await discovery()).serviceProvider('api', options);
    await provider.start({ timeoutMs: timing(20_000) });
    return { registrant, provider };
  };
  const picks = (provider: ServiceProvider, n: number) => Array.from({ length: n }, () => provider.getInstance()?.id ?? null);

  it('round-robin (the default) picks each instance in turn, and null when there is none', async () => {
    const { registrant, provider } = await providerOf3();
    expect(picks(provider, 6)).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
    expect(ids(provider.getAllInstances())).toEqual(['a', 'b', 'c']);
    const empty = (await discovery()).serviceProvider('none');
    await empty.start({ timeoutMs: timing(20_000) });
    expect(empty.getInstance()).toBeNull();
    for (const id of ['a', 'b', 'c']) await registrant.unregisterService(id);
    await cacheHolds(provider, (l) => l.length === 0, 'empty list');
    expect(provider.getInstance()).toBeNull();
  });

  it('random picks among the instances', async () => {
    const rolls = [0, 0.99, 0.5, 0.34];
    const { provider } = await providerOf3({ strategy: new RandomStrategy(() => rolls.shift() ?? 0) });
    expect(picks(provider, 4)).toEqual(['a', 'c', 'b', 'b']);
    const { provider: real } = await providerOf3({ strategy: new RandomStrategy() });
    for (const id of picks(real, 30)) expect(['a', 'b', 'c']).toContain(id);
  });

  it('sticky keeps its instance while it is in the list, also updated, and moves on once it goes', async () => {
    const sticky = new StickyStrategy();
    const { registrant, provider } = await providerOf3({ strategy: sticky });
    expect(picks(provider, 3)).toEqual(['a', 'a', 'a']);
    await registrant.updateService(createServiceInstance({ name: 'api', id: 'a', port: 9000 }));
    await eventually("a's update in the cache", () => provider.cache.getInstances().find((i) => i.id === 'a')?.port === 9000);
    expect(provider.getInstance()).toMatchObject({ id: 'a', port: 9000 });
    expect(sticky.instanceNumber).toBe(1);
    await registrant.unregisterService('a');
    await cacheHolds(provider, (l) => l.join() === 'b,c', 'b and c');
    const next = provider.getInstance()?.id;
    expect(['b', 'c']).toContain(next);
    expect(picks(provider, 3)).toEqual([next, next, next]);
    expect(sticky.instanceNumber).toBe(2);
  });

  it("noteError takes an instance out after the policy's errors, until its time is up", async () => {
    let now = 1_000_000;
    const { provider } = await providerOf3({ downInstancePolicy: { timeoutMs: 10_000, errorThreshold: 3 }, now: () => now });
    const b = provider.getAllInstances()[1];
    provider.noteError(b);
    provider.noteError(b);
    expect(ids(provider.getAllInstances())).toEqual(['a', 'b', 'c']);
    provider.noteError(b);
    expect(ids(provider.getAllInstances())).toEqual(['a', 'c']);
    expect(picks(provider, 4)).not.toContain('b');
    now += 9_999;
    expect(ids(provider.getAllInstances())).toEqual(['a', 'c']);
    now += 1;
    expect(ids(provider.getAllInstances())).toEqual(['a', 'b', 'c']);
    // Its errors were forgotten with it: one more is not enough to take it out again.
    provider.noteError(b);
    expect(ids(provider.getAllInstances())).toEqual(['a', 'b', 'c']);
  });

  it("Curator's default policy: down for 30 s after 2 errors", async () => {
    expect(DOWN_INSTANCE_POLICY_DEFAULTS).toEqual({ timeoutMs: 30_000, errorThreshold: 2 });
    let now = 0;
    const { provider } = await providerOf3({ now: () => now });
    const [a] = provider.getAllInstances();
    provider.noteError(a);
    expect(ids(provider.getAllInstances())).toEqual(['a', 'b', 'c']);
    provider.noteError(a);
    expect(ids(provider.getAllInstances())).toEqual(['b', 'c']);
    now = 29_999;
    expect(provider.getInstance()?.id).not.toBe('a');
    now = 30_000;
    expect(ids(provider.getAllInstances())).toEqual(['a', 'b', 'c']);
  });

  it('filters, and disabled instances, are left out', async () => {
    // Curator 5.4's compatible JSON (the default) has no `enabled` field: a disabled instance needs the other mode.
    const serializer = new JsonInstanceSerializer({ compatibleSerializationMode: false });
    const registrant = await discovery(undefined, { serializer });
    await registrant.registerService(createServiceInstance({ name: 'api', id: 'eu-1', payload: { region: 'eu' } }));
    await registrant.registerService(createServiceInstance({ name: 'api', id: 'eu-off', payload: { region: 'eu' }, enabled: false }));
    await registrant.registerService(createServiceInstance({ name: 'api', id: 'us-1', payload: { region: 'us' } }));
    const provider = (await discovery(undefined, { serializer })).serviceProvider('api', { filters: [(i) => i.payload?.region === 'eu'], strategy: new RoundRobinStrategy() });
    await provider.start({ timeoutMs: timing(20_000) });
    expect(ids(provider.cache.getInstances())).toEqual(['eu-1', 'eu-off', 'us-1']);
    expect(ids(provider.getAllInstances())).toEqual(['eu-1']);
    expect(picks(provider, 2)).toEqual(['eu-1', 'eu-1']);
  });

  it("a registered instance's session expires: the provider picks it again once it is back", async () => {
    const expiring = await zk.clients.connect({ connectString: zk.server.connectString });
    const states = new StateRecorder(expiring);
    const registrant = await discovery(expiring);
    await registrant.registerService(createServiceInstance({ name: 'api', id: 'phoenix' }));
    const provider = (await discovery()).serviceProvider('api');
    await provider.start({ timeoutMs: timing(20_000) });
    expect(provider.getInstance()?.id).toBe('phoenix');
    const gone = cacheHolds(provider, (l) => l.length === 0, 'phoenix gone');
    const mark = states.mark();
    await expireSession(expiring);
    await gone;
    await states.waitForNewSession(mark);
    await cacheHolds(provider, (l) => l.join() === 'phoenix', 'phoenix back');
    expect(provider.getInstance()?.id).toBe('phoenix');
  });

  it('refuses bad options before any I/O, and closes with its discovery', async () => {
    const d = await discovery();
    expect(() => d.serviceProvider('api', { strategy: {} as never })).toThrow(InvalidArgumentError);
    expect(() => d.serviceProvider('api', { filters: [1 as never] })).toThrow(InvalidArgumentError);
    expect(() => d.serviceProvider('api', { downInstancePolicy: { errorThreshold: 0 } })).toThrow(InvalidArgumentError);
    expect(() => d.serviceProvider('api', { downInstancePolicy: { timeoutMs: -5 } })).toThrow(InvalidArgumentError);
    const provider = d.serviceProvider('api');
    expect(() => provider.noteError(null as never)).toThrow(InvalidArgumentError);
    await provider.start({ timeoutMs: timing(20_000) });
    const ended = provider.cache.changes();
    await d.close();
    expect(await ended.next()).toEqual({ done: true, value: undefined });
    expect(provider.getInstance()).toBeNull();
  });
});
