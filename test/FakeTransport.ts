import { EventEmitter } from 'node:events';
import { serverError, type ServerErrorCode } from '../src/errors';
import type { ACL, CreateMode, Stat, Transport, TransportEvents, TransportOptions, Watcher } from '../src/transport/Transport';

interface FakeNode {
  data: Buffer;
  version: number;
  cversion: number;
  czxid: bigint;
  mzxid: bigint;
  pzxid: bigint;
  ephemeralOwner: bigint;
  sequence: number;
  acl: ACL[];
}

/**
 * An in-memory ZooKeeper shared by fake transports, for unit tests with exhaustive fault
 * schedules. It is not a faithful server: it models the tree, versions, sequence counters,
 * ephemeral owners and sessions, and lets a test script connection loss and expiry. A behaviour
 * proven here still has to pass against a real server.
 */
export class FakeZooKeeper {
  readonly nodes = new Map<string, FakeNode>([['/', this.newNode(Buffer.alloc(0), 0n)]]);
  readonly transports: FakeTransport[] = [];
  /** Every call made, as "method path", in order. */
  readonly calls: string[] = [];
  private zxid = 0n;
  private nextSession = 0x1000n;
  readonly liveSessions = new Set<bigint>();

  /** A TransportFactory whose transports talk to this fake. They connect on the next tick unless `autoConnect` is false. */
  factory(autoConnect = true): (options: TransportOptions) => Transport {
    return (options) => {
      const t = new FakeTransport(this, options);
      this.transports.push(t);
      if (autoConnect) setImmediate(() => t.connect());
      return t;
    };
  }

  newSession(requested?: bigint): bigint {
    if (requested !== undefined) return requested;
    const id = this.nextSession++;
    this.liveSessions.add(id);
    return id;
  }

  /** Ends a session: its ephemeral nodes go, as the server does on expiry. */
  expire(session: bigint): void {
    this.liveSessions.delete(session);
    for (const [path, node] of [...this.nodes]) if (node.ephemeralOwner === session) this.nodes.delete(path);
  }

  tick(): bigint {
    return ++this.zxid;
  }

  newNode(data: Buffer, owner: bigint): FakeNode {
    const z = this.zxid;
    return { data, version: 0, cversion: 0, czxid: z, mzxid: z, pzxid: z, ephemeralOwner: owner, sequence: 0, acl: [] };
  }
}

function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

function stat(n: FakeNode, numChildren: number): Stat {
  return {
    czxid: n.czxid,
    mzxid: n.mzxid,
    pzxid: n.pzxid,
    ctime: 0,
    mtime: 0,
    version: n.version,
    cversion: n.cversion,
    aversion: 0,
    ephemeralOwner: n.ephemeralOwner,
    dataLength: n.data.length,
    numChildren,
  };
}

/** One fake handle. Tests drive its connection with `connect()`, `disconnect()`, `expire()`. */
export class FakeTransport implements Transport {
  private readonly events = new EventEmitter();
  private session = 0n;
  private closedValue = false;
  private connectedNow = false;
  /** Codes the next calls fail with, in order, before reaching the tree. */
  readonly failures: ServerErrorCode[] = [];
  lastHeardAt = 0;
  readonly lastConnectError: Error | undefined = undefined;
  /** Like the native binding, it creates nodes open: the client sets their ACL after the create. */
  readonly aclOnCreate = false;

  constructor(
    private readonly zk: FakeZooKeeper,
    readonly options: TransportOptions,
  ) {}

  get sessionId(): bigint {
    return this.closedValue ? 0n : this.session;
  }
  get sessionPassword(): string {
    return '00'.repeat(16);
  }
  get negotiatedSessionTimeoutMs(): number {
    return this.options.sessionTimeoutMs;
  }
  get isClosed(): boolean {
    return this.closedValue;
  }

  on<E extends keyof TransportEvents>(event: E, listener: TransportEvents[E]): void {
    this.events.on(event, listener);
  }
  off<E extends keyof TransportEvents>(event: E, listener: TransportEvents[E]): void {
    this.events.off(event, listener);
  }

  connect(): void {
    if (this.closedValue) return;
    this.lastHeardAt = performance.now();
    if (this.session !== 0n && !this.zk.liveSessions.has(this.session)) {
      this.closedValue = true;
      this.events.emit('closed', 'expired');
      return;
    }
    if (this.session === 0n) this.session = this.zk.newSession(this.options.sessionId);
    this.connectedNow = true;
    this.events.emit('connected');
  }

  disconnect(): void {
    if (!this.connectedNow) return;
    this.connectedNow = false;
    this.events.emit('connecting');
  }

  async close(): Promise<void> {
    if (this.closedValue) return;
    this.closedValue = true;
    if (this.connectedNow) this.zk.expire(this.session);
    this.connectedNow = false;
  }

  private op<T>(name: string, path: string, fn: () => T): Promise<T> {
    this.zk.calls.push(`${name} ${path}`);
    if (this.closedValue) return Promise.reject(serverError(-116, { path }));
    if (!this.connectedNow) return Promise.reject(serverError(-4, { path }));
    const failure = this.failures.shift();
    if (failure) return Promise.reject(serverError(failure, { path, message: `${failure} (scripted)` }));
    this.lastHeardAt = performance.now();
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private node(path: string): FakeNode {
    const n = this.zk.nodes.get(path);
    if (!n) throw serverError(-101, { path });
    return n;
  }

  private children(path: string): string[] {
    const prefix = path === '/' ? '/' : `${path}/`;
    return [...this.zk.nodes.keys()].filter((p) => p !== path && p.startsWith(prefix) && !p.slice(prefix.length).includes('/')).map((p) => p.slice(prefix.length));
  }

  create(path: string, data: Buffer, mode: CreateMode, _acl: readonly ACL[]): Promise<string> {
    return this.op('create', path, () => {
      const parent = this.node(parentOf(path));
      if (parent.ephemeralOwner !== 0n) throw serverError(-108, { path });
      let full = path;
      if (mode.includes('SEQUENTIAL')) full = `${path}${String(parent.sequence).padStart(10, '0')}`;
      if (this.zk.nodes.has(full)) throw serverError(-110, { path: full });
      parent.sequence++;
      parent.cversion++;
      parent.pzxid = this.zk.tick();
      this.zk.nodes.set(full, this.zk.newNode(data, mode.startsWith('EPHEMERAL') ? this.session : 0n));
      return full;
    });
  }

  delete(path: string, version: number): Promise<void> {
    return this.op('delete', path, () => {
      const n = this.node(path);
      if (version !== -1 && version !== n.version) throw serverError(-103, { path });
      if (this.children(path).length > 0) throw serverError(-111, { path });
      this.zk.nodes.delete(path);
      const parent = this.zk.nodes.get(parentOf(path));
      if (parent) parent.pzxid = this.zk.tick();
    });
  }

  exists(path: string, _watcher?: Watcher): Promise<Stat | null> {
    return this.op('exists', path, () => {
      const n = this.zk.nodes.get(path);
      return n ? stat(n, this.children(path).length) : null;
    });
  }

  getData(path: string, _watcher?: Watcher): Promise<{ data: Buffer; stat: Stat }> {
    return this.op('getData', path, () => {
      const n = this.node(path);
      return { data: n.data, stat: stat(n, this.children(path).length) };
    });
  }

  setData(path: string, data: Buffer, version: number): Promise<Stat> {
    return this.op('setData', path, () => {
      const n = this.node(path);
      if (version !== -1 && version !== n.version) throw serverError(-103, { path });
      n.data = data;
      n.version++;
      n.mzxid = this.zk.tick();
      return stat(n, this.children(path).length);
    });
  }

  getChildren(path: string, _watcher?: Watcher): Promise<{ children: string[]; stat: Stat }> {
    return this.op('getChildren', path, () => {
      const n = this.node(path);
      const children = this.children(path);
      return { children, stat: stat(n, children.length) };
    });
  }

  sync(path: string): Promise<void> {
    return this.op('sync', path, () => undefined);
  }

  getACL(path: string): Promise<{ acl: ACL[]; stat: Stat }> {
    return this.op('getACL', path, () => {
      const n = this.node(path);
      return { acl: n.acl, stat: stat(n, this.children(path).length) };
    });
  }

  setACL(path: string, acl: readonly ACL[]): Promise<void> {
    return this.op('setACL', path, () => {
      this.node(path).acl = [...acl];
    });
  }

  addAuth(scheme: string): Promise<void> {
    this.zk.calls.push(`addAuth ${scheme}`);
    return Promise.resolve();
  }
}
