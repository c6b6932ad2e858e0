import { ServiceCache, ServiceDiscovery, createServiceInstance, type ServiceInstance } from '../../../recipes/discovery';
import { CacheTimeoutError } from '../../../recipes/cache';
import { IllegalStateError, InvalidArgumentError, type ZkClient } from '../../../src';
import { FaultProxy } from '../../../src/testing';
import { StateRecorder, eventually, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';

const ids = (instances: readonly ServiceInstance[]) => instances.map((i) => i.id);

/** Resolves with the first list the cache reports to 'changed' that `accept` takes; rejects after a bounded wait. */
function changedTo(cache: ServiceCache, accept: (instances: ServiceInstance[]) => boolean, what: string, timeoutMs = timing(20_000)): Promise<ServiceInstance[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cache.off('changed', listener);
      reject(new Error(`no change to ${what} within ${timeoutMs} ms; the cache holds ${JSON.stringify(ids(cache.getInstances()))}`));
    }, timeoutMs);
    const listener = (instances: ServiceInstance[]) => {
      if (!accept(instances)) return;
      clearTimeout(timer);
      cache.off('changed', listener);
      resolve(instances);
    };
    cache.on('changed', listener);
  });
}

describe('ServiceCache', () => {
  const discoveries: ServiceDiscovery[] = [];
  let base: string;

  const zk = useZooKeeper({ beforeClose: () => Promise.all(discoveries.splice(0).map((d) => d.close())) });
  beforeEach(() => {
    base = `${randomRoot('discovery-cache')}/services`;
  });

  const discovery = async (client: ZkClient) => {
    const d = new ServiceDiscovery(client, base);
    discoveries.push(d);
    await d.start();
    return d;
  };

  it('loads the instances there, then hears each register, update and unregister, as events and as an iterator', async () => {
    const registrant = await discovery(await zk.clients.connect({ connectString: zk.server.connectString }));
    const reader = await discovery(await zk.clients.connect({ connectString: zk.server.connectString }));
    await registrant.registerService(createServiceInstance({ name: 'api', id: 'b', port: 1 }));
    await registrant.registerService(createServiceInstance({ name: 'other', id: 'x' }));
    const cache = reader.serviceCache('api');
    await cache.start({ timeoutMs: timing(20_000) });
    expect(ids(cache.getInstances())).toEqual(['b']);
    const controller = new AbortController();
    const iterator = cache.changes({ signal: controller.signal });
    expect(ids((await iterator.next()).value as ServiceInstance[])).toEqual(['b']);

    const added = changedTo(cache, (l) => ids(l).join() === 'a,b', 'a and b');
    const a = createServiceInstance({ name: 'api', id: 'a', port: 8080, payload: { region: 'eu' } });
    await registrant.registerService(a);
    expect((await added).find((i) => i.id === 'a')).toMatchObject({ port: 8080, payload: { region: 'eu' } });
    expect(ids((await iterator.next()).value as ServiceInstance[])).toEqual(['a', 'b']);

    const updated = changedTo(cache, (l) => l.find((i) => i.id === 'a')?.port === 9090, "a's new port");
    await registrant.updateService({ ...a, port: 9090 });
    await updated;
    expect(cache.getInstances().map((i) => i.port)).toEqual([9090, 1]);

    const removed = changedTo(cache, (l) => ids(l).join() === 'b', 'b alone');
    await registrant.unregisterService(a);
    await removed;
    // The iterator merged the update and the removal it had not taken yet into the latest list.
    expect(ids((await iterator.next()).value as ServiceInstance[])).toEqual(['b']);
    const pending = iterator.next();
    controller.abort(new Error('done'));
    await expect(pending).rejects.toThrow('done');

    const ended = cache.changes();
    await reader.close();
    expect(await ended.next()).toEqual({ done: true, value: undefined });
    expect(cache.getInstances()).toEqual([]);
  });

  it('keeps its last list through SUSPENDED and LOST, and after a partition longer than the session reports only what changed', async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const cut = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 4_000 });
    const states = new StateRecorder(cut);
    const registrant = await discovery(await zk.clients.connect({ connectString: zk.server.connectString }));
    const reader = await discovery(cut);
    await registrant.registerService(createServiceInstance({ name: 'api', id: 'a' }));
    await registrant.registerService(createServiceInstance({ name: 'api', id: 'b' }));
    const cache = reader.serviceCache('api');
    const heard: string[][] = [];
    cache.on('changed', (l) => heard.push(ids(l)));
    const seenStates: string[] = [];
    cache.on('stateChanged', (s) => seenStates.push(s));
    await cache.start({ timeoutMs: timing(20_000) });
    expect(ids(cache.getInstances())).toEqual(['a', 'b']);

    const mark = states.mark();
    proxy.blackhole();
    await registrant.unregisterService('b');
    await registrant.registerService(createServiceInstance({ name: 'api', id: 'c' }));
    await states.waitFor('SUSPENDED', mark);
    expect(ids(cache.getInstances())).toEqual(['a', 'b']);
    await states.waitFor('LOST', mark);
    expect(ids(cache.getInstances())).toEqual(['a', 'b']);
    expect(heard).toEqual([]);

    const caughtUp = changedTo(cache, (l) => ids(l).join() === 'a,c', 'a and c');
    proxy.heal();
    await states.waitFor('RECONNECTED', mark);
    await caughtUp;
    expect(seenStates).toEqual(expect.arrayContaining(['SUSPENDED', 'LOST', 'RECONNECTED']));
    // 'a' did not change: only b's going and c's coming were reported.
    expect(heard.every((l) => l.includes('a'))).toBe(true);
  });

  it('the server restarts: the cache keeps its list meanwhile, and a DYNAMIC instance back in its new session is in it', async () => {
    const registrantClient = await zk.clients.connect({ connectString: zk.server.connectString, sessionTimeoutMs: 4_000 });
    const registrantStates = new StateRecorder(registrantClient);
    const registrant = await discovery(registrantClient);
    const reader = await discovery(await zk.clients.connect({ connectString: zk.server.connectString }));
    await registrant.registerService(createServiceInstance({ name: 'api', id: 'a', port: 1 }));
    const cache = reader.serviceCache('api');
    await cache.start({ timeoutMs: timing(20_000) });
    const oldSession = registrantClient.sessionId;
    const mark = registrantStates.mark();
    await zk.server.stop();
    try {
      await registrantStates.waitFor('LOST', mark);
      expect(ids(cache.getInstances())).toEqual(['a']);
    } finally {
      await zk.server.start();
    }
    await registrantStates.waitFor('RECONNECTED', mark);
    // The old session's node goes (the server expires it), and the new session's comes.
    const other = await discovery(await zk.clients.connect({ connectString: zk.server.connectString }));
    const withB = changedTo(cache, (l) => ids(l).join() === 'a,b', 'a and b');
    await other.registerService(createServiceInstance({ name: 'api', id: 'b' }));
    await withB;
    expect(registrantClient.sessionId).not.toBe(oldSession);
    await eventually('a in the new session', async () => (await registrantClient.exists(`${base}/api/a`))?.ephemeralOwner === registrantClient.sessionId);
    await eventually('the cache holding a and b', () => ids(cache.getInstances()).join() === 'a,b');
  });

  it('refuses bad input before any I/O; start() is bounded by its timeout and closes the cache', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const d = await discovery(client);
    expect(() => d.serviceCache('a/b')).toThrow(InvalidArgumentError);
    const cache = d.serviceCache('api');
    await expect(cache.start({ timeoutMs: -1 })).rejects.toThrow(InvalidArgumentError);
    await expect(cache.start({ signal: AbortSignal.abort(new Error('stop')) })).rejects.toThrow('stop');
    expect(() => cache.changes({ signal: 'no' as never })).toThrow(InvalidArgumentError);
    await cache.start({ timeoutMs: timing(20_000) });
    await expect(cache.start()).rejects.toThrow(IllegalStateError);

    await zk.server.stop();
    try {
      const late = d.serviceCache('late');
      const started = Date.now();
      await expect(late.start({ timeoutMs: timing(500) })).rejects.toThrow(CacheTimeoutError);
      // Bounded by its timeout; the margin is for a loaded machine, far below a hang.
      expect(Date.now() - started).toBeLessThan(timing(500) + timing(5_000));
      expect(await late.changes().next()).toEqual({ done: true, value: undefined });
    } finally {
      await zk.server.start();
    }
    await d.close();
    expect(() => d.serviceCache('api')).toThrow(IllegalStateError);
  });

  it('leaves out a node that holds no instance, saying so, and serves the others', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const d = await discovery(client);
    await d.registerService(createServiceInstance({ name: 'api', id: 'good' }));
    await client.create(`${base}/api/junk`, { data: 'not json' });
    const cache = d.serviceCache('api');
    const errors: unknown[] = [];
    cache.on('error', (err) => errors.push(err));
    await cache.start({ timeoutMs: timing(20_000) });
    expect(ids(cache.getInstances())).toEqual(['good']);
    expect(errors).toEqual([expect.objectContaining({ name: 'ServiceInstanceFormatError' })]);
  });
});
