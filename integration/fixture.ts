import type { ZkClient, ZkClientOptions } from '../src';
import { FaultProxy, TestingServer, type TestingServerOptions } from '../src/testing';
import { Clients, timing } from './helpers';

/** What a test file asks of its ZooKeeper. */
export interface ZooKeeperFixtureOptions {
  /** The server's options; default `{ forceSync: false }`, as every file had it. */
  server?: TestingServerOptions;
  /** A FaultProxy in front of the server: a new one for each test ('each'), or one for the file ('file'). Default none. */
  proxy?: 'each' | 'file';
  /** When the clients close: after each test (the default), or after the file. */
  closeClients?: 'each' | 'file';
  /**
   * What the file closes before its clients (its recipes, caches, watches), at the same moment:
   * after each test, or after the file with `closeClients: 'file'`.
   */
  beforeClose?: () => unknown;
}

/** One test file's ZooKeeper, ready inside its tests and hooks. */
export interface ZooKeeperFixture {
  readonly server: TestingServer;
  /** The proxy in front of the server; only with the `proxy` option. */
  readonly proxy: FaultProxy;
  readonly clients: Clients;
  /** Where clients connect: the proxy when there is one, else the server. */
  readonly connectString: string;
  /** A started, connected client of `connectString`, closed by the fixture. */
  connect(options?: Partial<ZkClientOptions>, waitMs?: number): Promise<ZkClient>;
  /**
   * Another FaultProxy in front of the server, for a test that needs one of its own or several.
   * It is closed just after the clients, so that they can still say goodbye through it.
   */
  startProxy(): Promise<FaultProxy>;
}

/**
 * The prologue every integration file had: a TestingServer for the file, a FaultProxy when asked,
 * clients closed after each test (the file's own recipes first, by `beforeClose`), and all of it
 * closed after the file: clients, then proxy, then server. Call it at the top of the `describe`,
 * before hooks that use the server: Jest runs hooks of one block in the order they are declared.
 *
 * @example
 * const zk = useZooKeeper({ proxy: 'each', beforeClose: () => Promise.all(caches.splice(0).map((c) => c.close())) });
 * it('…', async () => { const client = await zk.connect(); zk.proxy.cut(); … });
 */
export function useZooKeeper(options: ZooKeeperFixtureOptions = {}): ZooKeeperFixture {
  const clients = new Clients();
  let server: TestingServer | undefined;
  let proxy: FaultProxy | undefined;
  const ownProxies: FaultProxy[] = [];
  const closeClients = async () => {
    await options.beforeClose?.();
    await clients.closeAll();
    await Promise.all(ownProxies.splice(0).map((p) => p.close()));
  };

  beforeAll(async () => {
    server = await TestingServer.start(options.server ?? { forceSync: false });
    if (options.proxy === 'file') proxy = await FaultProxy.start(server.connectString);
  });
  if (options.proxy === 'each') {
    beforeEach(async () => {
      proxy = await FaultProxy.start(fixture.server.connectString);
    });
  }
  afterEach(async () => {
    if (options.closeClients !== 'file') await closeClients();
    if (options.proxy === 'each') await proxy?.close();
  });
  afterAll(async () => {
    if (options.closeClients === 'file') await closeClients();
    if (options.proxy === 'file') await proxy?.close();
    await server?.close();
  });

  const fixture: ZooKeeperFixture = {
    get server() {
      if (server === undefined) throw new Error('the test server is not started: use the fixture inside tests and hooks');
      return server;
    },
    get proxy() {
      if (proxy === undefined) throw new Error(options.proxy === undefined ? 'no proxy: pass { proxy: "each" } or { proxy: "file" }' : 'the proxy is not started yet');
      return proxy;
    },
    clients,
    get connectString() {
      return options.proxy === undefined ? fixture.server.connectString : fixture.proxy.connectString;
    },
    connect: (clientOptions = {}, waitMs = timing(20_000)) => clients.connect({ connectString: fixture.connectString, ...clientOptions }, waitMs),
    startProxy: async () => {
      const started = await FaultProxy.start(fixture.server.connectString);
      ownProxies.push(started);
      return started;
    },
  };
  return fixture;
}
