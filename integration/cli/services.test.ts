import { JsonInstanceSerializer, ServiceDiscovery, createServiceInstance } from '../../recipes/discovery';
import type { ServicesReport } from '../../cli/services';
import type { ZkClient } from '../../src';
import { TestingServer } from '../../src/testing';
import { Clients, randomRoot } from '../helpers';
import { CuratorPeer } from '../interop/CuratorPeer';
import { Lines, cli, cliJson } from './cliTesting';

describe('zk-recipes services: the services registered under a base path, and their instances', () => {
  let server: TestingServer;
  let peer: CuratorPeer;
  let client: ZkClient;
  let connect: string[];
  let base: string;
  const clients = new Clients();
  const discoveries: ServiceDiscovery[] = [];

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    peer = await CuratorPeer.start(server.connectString, { label: 'cli-services-peer' });
    client = await clients.connect({ connectString: server.connectString });
    connect = ['--connect', server.connectString];
  });
  beforeEach(() => {
    base = `${randomRoot('cli-services')}/services`;
  });
  afterEach(async () => {
    await Promise.all(discoveries.splice(0).map((d) => d.close()));
  });
  afterAll(async () => {
    await clients.closeAll();
    await peer?.close();
    await server?.close();
  });

  // Curator 5.4's compatible mode leaves `enabled` out (read as true): the first test writes it.
  const discovery = async (compatibleSerializationMode = true) => {
    const d = new ServiceDiscovery(client, base, { serializer: new JsonInstanceSerializer({ compatibleSerializationMode }) });
    discoveries.push(d);
    await d.start();
    return d;
  };

  it('lists the names with their instance counts, then one service: ids, addresses, ports, types and payloads', async () => {
    const d = await discovery(false);
    await d.registerService(createServiceInstance({ name: 'api', id: 'a1', address: '10.0.0.1', port: 8080, payload: { region: 'eu' }, registrationTimeUTC: 1_700_000_000_000 }));
    await d.registerService(createServiceInstance({ name: 'api', id: 'a2', address: '10.0.0.2', sslPort: 8443, serviceType: 'STATIC', enabled: false, uriSpec: '{scheme}://{address}:{ssl-port}' }));
    await d.registerService(createServiceInstance({ name: 'billing', id: 'b1', address: '10.0.0.3', port: 9000 }));

    const names = await cli(['services', base, ...connect]);
    expect(names).toMatchObject({ code: 0, stderr: '' });
    expect(names.stdout.split('\n')).toEqual([`${base}  2 services`, expect.stringMatching(/^ {2}NAME +INSTANCES$/), expect.stringMatching(/^ {2}api +2$/), expect.stringMatching(/^ {2}billing +1$/), '']);

    const api = await cli(['services', base, 'api', ...connect]);
    expect(api).toMatchObject({ code: 0, stderr: '' });
    const lines = api.stdout.split('\n');
    expect(lines[0]).toBe(`${base}/api  2 instances`);
    expect(lines[1]).toMatch(/^ {2}ID +ADDRESS +PORT +SSL PORT +TYPE +PAYLOAD$/);
    expect(lines[2]).toMatch(/^ {2}a1 +10\.0\.0\.1 +8080 +- +DYNAMIC +\{"@class":"java\.util\.LinkedHashMap","region":"eu"\}$/);
    expect(lines[3]).toMatch(/^ {2}a2 +10\.0\.0\.2 +- +8443 +STATIC \(disabled\) +-$/);

    const report = await cliJson<ServicesReport>(['services', base, 'api', ...connect]);
    expect(report).toMatchObject({ command: 'services', path: base, service: 'api', services: [], unreadable: [] });
    expect(report.instances).toEqual([
      {
        id: 'a1',
        name: 'api',
        address: '10.0.0.1',
        port: 8080,
        sslPort: null,
        serviceType: 'DYNAMIC',
        enabled: true,
        registered: new Date(1_700_000_000_000).toISOString(),
        payload: { '@class': 'java.util.LinkedHashMap', region: 'eu' },
        uriSpec: null,
        ephemeral: true,
      },
      expect.objectContaining({ id: 'a2', sslPort: 8443, serviceType: 'STATIC', enabled: false, uriSpec: '{scheme}://{address}:{ssl-port}', ephemeral: false }),
    ]);
    expect(await cliJson<ServicesReport>(['services', base, ...connect])).toMatchObject({ service: null, services: [{ name: 'api', instances: 2 }, { name: 'billing', instances: 1 }], instances: [] });
  });

  it("shows an instance Curator registered, its Java payload's @class included, beside ours", async () => {
    const d = await discovery();
    await d.registerService(createServiceInstance({ name: 'api', id: 'node', address: '10.0.0.1', port: 1 }));
    await peer.request('discovery.new', { name: `java-${base}`, basePath: base });
    await peer.request('discovery.register', { name: `java-${base}`, service: 'api', instanceId: 'java', address: '10.0.0.9', port: 2, description: 'from java', weight: 3 });

    const report = await cliJson<ServicesReport>(['services', base, 'api', ...connect]);
    expect(report.instances.map((i) => i.id)).toEqual(['java', 'node']);
    expect(report.instances[0]).toMatchObject({
      address: '10.0.0.9',
      port: 2,
      serviceType: 'DYNAMIC',
      payload: { '@class': 'zkrecipes.interop.CuratorPeer$ServiceDetails', description: 'from java', weight: 3 },
      ephemeral: true,
    });
    await peer.request('forget', { name: `java-${base}` });
  });

  it('lists a node that holds no instance apart, and fails as the other commands do on a missing path or a bad name', async () => {
    const d = await discovery();
    await d.registerService(createServiceInstance({ name: 'api', id: 'ok', port: 1 }));
    await client.create(`${base}/api/junk`, { data: 'not json' });
    const run = await cli(['services', base, 'api', ...connect]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`${base}/api  1 instance\n`);
    expect(run.stdout).toContain('1 node holding no instance ignored: junk');
    expect(await cliJson<ServicesReport>(['services', base, 'api', ...connect])).toMatchObject({ unreadable: ['junk'] });

    expect(await cli(['services', base, 'nope', ...connect])).toMatchObject({ code: 4, stderr: `zk-recipes: ${base}/nope does not exist\n` });
    expect(await cli(['services', `${base}-missing`, ...connect])).toMatchObject({ code: 4 });
    expect(await cli(['services', base, 'a/b', ...connect])).toMatchObject({ code: 2, stderr: expect.stringContaining("one node name (no '/')") });
    expect(await cli(['services', base, 'api', 'extra', ...connect])).toMatchObject({ code: 2, stderr: expect.stringContaining('one service name at most') });
    expect(await cli(['locks', base, 'api', ...connect])).toMatchObject({ code: 2, stderr: expect.stringContaining('one path at a time') });
  });

  it('watch services: a new instance and one gone show without polling', async () => {
    const d = await discovery();
    await d.registerService(createServiceInstance({ name: 'api', id: 'first', port: 1 }));
    const stop = new AbortController();
    const out = new Lines();
    const watching = cli(['watch', 'services', base, 'api', '--json', ...connect], { stop: stop.signal, stdout: out });
    const ids = (line: string) => (JSON.parse(line) as ServicesReport).instances?.map((i) => i.id).join() ?? '';
    try {
      await out.waitFor((l) => ids(l) === 'first');
      const mark = out.lines.length;
      await d.registerService(createServiceInstance({ name: 'api', id: 'second', port: 2 }));
      await out.waitFor((l) => ids(l) === 'first,second', mark);
      await d.unregisterService('first');
      await out.waitFor((l) => ids(l) === 'second', mark);
    } finally {
      stop.abort(new Error('SIGINT'));
    }
    expect((await watching).code).toBe(0);
  });
});
