import { InvalidArgumentError, Perms, UnsupportedError, ZkClient, type AclProvider, type ConnectionState } from '..';
import { RetryNTimes, type RetryPolicy } from '../retry';
import { FakeTransport, FakeZooKeeper } from '../../test/FakeTransport';
import { OPEN_ACL } from '../transport/Transport';
import { findProtectedNode } from './protection';

function setup(options: { autoConnect?: boolean; sessionTimeoutMs?: number; aclProvider?: AclProvider; retryPolicy?: RetryPolicy } = {}) {
  const zk = new FakeZooKeeper();
  const client = new ZkClient({
    connectString: '127.0.0.1:2181',
    sessionTimeoutMs: options.sessionTimeoutMs ?? 1_000,
    connectionTimeoutMs: 200,
    retryPolicy: options.retryPolicy ?? new RetryNTimes({ n: 3, sleepMsBetweenRetries: 1 }),
    transportFactory: zk.factory(options.autoConnect ?? true),
    aclProvider: options.aclProvider,
  });
  const states: ConnectionState[] = [];
  client.on('stateChanged', (s) => states.push(s));
  return { zk, client, states, transport: () => zk.transports[zk.transports.length - 1] as FakeTransport };
}

describe('ZkClient (in-memory fake)', () => {
  afterEach(() => jest.useRealTimers());

  it('follows Curator states through a scripted fault schedule, without duplicates', async () => {
    const { client, states, transport, zk } = setup({ autoConnect: false });
    client.start();
    const first = transport();
    first.connect();
    first.disconnect();
    first.disconnect(); // a second drop while down reports nothing new
    first.connect();
    const session = client.sessionId;
    first.disconnect();
    zk.expire(session);
    first.connect(); // the server says the session expired
    expect(states).toEqual(['CONNECTED', 'SUSPENDED', 'RECONNECTED', 'SUSPENDED', 'LOST']);
    const second = transport();
    expect(second).not.toBe(first);
    second.connect();
    expect(states.at(-1)).toBe('RECONNECTED');
    expect(client.sessionId).not.toBe(session);
    await client.close();
  });

  it('declares LOST a margin before the server can expire the session, counted from the last word from the server', async () => {
    jest.useFakeTimers();
    const { client, states, transport } = setup({ autoConnect: false, sessionTimeoutMs: 5_000 });
    client.start();
    const first = transport();
    // The fake clock starts at 0, which a transport reports before it has heard anything.
    jest.advanceTimersByTime(1_000);
    first.connect();
    const session = client.session;
    const lost = new Promise<unknown>((resolve) => session?.signal.addEventListener('abort', () => resolve(session.signal.reason)));
    // Heard from at 0; the drop is noticed at 2 s. The server can expire the session at 5 s: LOST
    // comes at 5 s less the margin (a tenth of the timeout), not 5 s after SUSPENDED.
    jest.advanceTimersByTime(2_000);
    first.disconnect();
    jest.advanceTimersByTime(2_450);
    expect(states).toEqual(['CONNECTED', 'SUSPENDED']);
    jest.advanceTimersByTime(100);
    expect(states).toEqual(['CONNECTED', 'SUSPENDED', 'LOST']);
    await expect(lost).resolves.toBeDefined();
    expect(first.isClosed).toBe(true);
    const second = transport();
    expect(second).not.toBe(first);
    // The old handle's events no longer count.
    first.connect();
    expect(states).toEqual(['CONNECTED', 'SUSPENDED', 'LOST']);
    second.connect();
    expect(states).toEqual(['CONNECTED', 'SUSPENDED', 'LOST', 'RECONNECTED']);
    await client.close();
  });

  it('a reconnect inside the session timeout cancels LOST', async () => {
    jest.useFakeTimers();
    const { client, states, transport } = setup({ autoConnect: false, sessionTimeoutMs: 5_000 });
    client.start();
    transport().connect();
    transport().disconnect();
    jest.advanceTimersByTime(4_000);
    transport().connect();
    jest.advanceTimersByTime(10_000);
    expect(states).toEqual(['CONNECTED', 'SUSPENDED', 'RECONNECTED']);
    await client.close();
  });

  it('rejects bad input before any I/O', async () => {
    const { client, zk } = setup();
    client.start();
    await client.blockUntilConnected({ timeoutMs: 1_000 });
    const before = zk.calls.length;
    const bad: Array<() => Promise<unknown>> = [
      () => client.create(''),
      () => client.create('/a/'),
      () => client.create('/a//b'),
      () => client.getData('/a/..'),
      () => client.setData('/a', Buffer.alloc(2 * 1024 * 1024)),
      () => client.delete('/a', { version: 1.5 }),
      () => client.exists(42 as never),
      () => client.sync('/a', { signal: {} as never }),
      () => client.setACL('/a', []),
      () => client.ensurePath('/a\u0001b'),
    ];
    for (const call of bad) await expect(call()).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(zk.calls.slice(before)).toEqual([]);
    await client.close();
  });

  it('rejects bad options at construction', () => {
    const ok = { connectString: '127.0.0.1:2181' };
    expect(() => new ZkClient({ ...ok, sessionTimeoutMs: -1 })).toThrow(InvalidArgumentError);
    expect(() => new ZkClient({ ...ok, sessionTimeoutMs: 0 })).toThrow('sessionTimeoutMs must be a positive number of milliseconds (at most 2147483647), got 0');
    expect(() => new ZkClient({ ...ok, connectionTimeoutMs: Number.NaN })).toThrow(InvalidArgumentError);
    expect(() => new ZkClient({ connectString: 'no-port' })).toThrow(InvalidArgumentError);
    expect(() => new ZkClient({ ...ok, namespace: '/leading' })).toThrow(InvalidArgumentError);
    expect(() => new ZkClient({ ...ok, connectionStateErrorPolicy: 'other' as never })).toThrow(InvalidArgumentError);
    expect(() => new ZkClient({ ...ok, retryPolicy: {} as never })).toThrow(InvalidArgumentError);
    expect(() => new ZkClient({ ...ok, canBeReadOnly: true })).toThrow(UnsupportedError);
    expect(Object.isFrozen(new ZkClient(ok).options)).toBe(true);
  });

  it('retries a retryable failure and passes on a non-retryable one at once', async () => {
    const { client, zk, transport } = setup();
    client.start();
    await client.blockUntilConnected({ timeoutMs: 1_000 });
    transport().failures.push('CONNECTIONLOSS', 'OPERATIONTIMEOUT');
    await client.create('/r', { data: 'x' });
    expect(zk.calls.filter((c) => c === 'create /r')).toHaveLength(3);
    transport().failures.push('NOAUTH');
    await expect(client.getData('/r')).rejects.toMatchObject({ code: 'NOAUTH' });
    expect(zk.calls.filter((c) => c === 'getData /r')).toHaveLength(1);
    await client.close();
  });

  it('an operation answered SESSIONEXPIRED on a connection that stays up ends the session: LOST, then a new one', async () => {
    const { client, zk, states, transport } = setup();
    client.start();
    await client.blockUntilConnected({ timeoutMs: 1_000 });
    const first = transport();
    const session = client.sessionId;
    first.failures.push('SESSIONEXPIRED');
    // Retried in the new session, where it succeeds.
    await client.create('/after-expiry', { data: 'x' });
    expect(states).toEqual(['CONNECTED', 'LOST', 'RECONNECTED']);
    expect(transport()).not.toBe(first);
    expect(client.sessionId).not.toBe(session);
    expect(zk.nodes.has('/after-expiry')).toBe(true);
    await client.close();
  });

  it('a read pinned to a session runs in it, and rejects with SESSION_LOST, unsent, once the client has another', async () => {
    const { client, zk, transport } = setup();
    client.start();
    await client.blockUntilConnected({ timeoutMs: 1_000 });
    const created = await client.createAndListParent('/p', { data: 'x' });
    const session = created.session;
    expect(session).toBe(client.session);
    expect(session.id).toBe(client.sessionId);
    expect((await client.getData('/p', { session })).data.toString()).toBe('x');
    // A failure in the session is retried as usual.
    transport().failures.push('CONNECTIONLOSS');
    await client.exists('/p', { session });
    // The session ends and the client gets a new one.
    const first = transport();
    first.disconnect();
    zk.expire(session.id);
    first.connect();
    await client.blockUntilConnected({ timeoutMs: 1_000 });
    expect(client.sessionId).not.toBe(session.id);
    expect(session.isEnded).toBe(true);
    expect(session.signal.reason).toMatchObject({ code: 'SESSION_LOST', reason: 'expired' });
    const before = zk.calls.length;
    await expect(client.getChildren('/', { session })).rejects.toMatchObject({ code: 'SESSION_LOST' });
    await expect(client.exists('/p', { session, watcher: () => undefined })).rejects.toMatchObject({ code: 'SESSION_LOST' });
    expect(zk.calls.slice(before)).toEqual([]);
    await expect(client.getData('/p', { session: 0n as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client.getData('/p', { session: 7 as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    await client.close();
  });

  it("with an aclProvider, an ephemeral node's ACL is set in the node's session; once it has ended, the create rejects with SESSION_LOST", async () => {
    let strike: (() => void) | undefined;
    const acl = [{ perms: Perms.ALL, scheme: 'world', id: 'anyone' }];
    const { zk, client, transport } = setup({ aclProvider: { getDefaultAcl: () => acl, getAclForPath: () => acl } });
    client.start();
    await client.blockUntilConnected({ timeoutMs: 1_000 });
    // The session ends between the create's reply and the setACL (the fake, as the native binding, creates nodes open).
    const strikeAfterCreate = (t: FakeTransport) => {
      const create = t.create.bind(t);
      t.create = async (...args) => {
        const created = await create(...args);
        strike?.();
        strike = undefined;
        return created;
      };
    };
    const expireNow = () => {
      const t = transport();
      zk.expire(t.sessionId);
      t.disconnect();
      t.connect();
    };
    strikeAfterCreate(transport());
    strike = expireNow;
    const before = zk.calls.length;
    await expect(client.create('/e', { mode: 'EPHEMERAL' })).rejects.toMatchObject({ code: 'SESSION_LOST' });
    expect(zk.calls.slice(before)).toEqual(['create /e']);
    expect(zk.nodes.has('/e')).toBe(false);
    // A persistent node outlives the session: its ACL is set in the next.
    await client.blockUntilConnected({ timeoutMs: 1_000 });
    strikeAfterCreate(transport());
    strike = expireNow;
    await client.create('/p');
    await client.blockUntilConnected({ timeoutMs: 1_000 });
    expect(zk.calls.slice(-2)).toEqual(['create /p', 'setACL /p']);
    await client.close();
  });

  it('with an aclProvider, a node whose setACL after the create fails is deleted, not left open', async () => {
    const acl = [{ perms: Perms.READ, scheme: 'world', id: 'anyone' }];
    const { zk, client, transport } = setup({ aclProvider: { getDefaultAcl: () => acl, getAclForPath: () => acl } });
    client.start();
    await client.blockUntilConnected({ timeoutMs: 1_000 });
    const t = transport();
    const create = t.create.bind(t);
    t.create = async (...args) => {
      const created = await create(...args);
      t.failures.push('NOAUTH');
      return created;
    };
    await expect(client.create('/p')).rejects.toMatchObject({ code: 'NOAUTH' });
    const deadline = Date.now() + 5_000;
    while (zk.nodes.has('/p') && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    expect(zk.nodes.has('/p')).toBe(false);
    expect(zk.calls.filter((c) => c.endsWith(' /p'))).toEqual(['create /p', 'setACL /p', 'delete /p']);
    await client.close();
  });

  it('close() ends an operation waiting out its back-off between retries at once, not after it', async () => {
    const { client, zk, transport } = setup({ retryPolicy: new RetryNTimes({ n: 3, sleepMsBetweenRetries: 60_000 }) });
    client.start();
    await client.blockUntilConnected({ timeoutMs: 1_000 });
    transport().failures.push('CONNECTIONLOSS');
    const read = client.getData('/');
    const outcome = read.then(
      () => 'resolved',
      (err: unknown) => err,
    );
    // The failed attempt is handled in microtasks: by the next macrotask the back-off has begun.
    await new Promise((resolve) => setImmediate(resolve));
    expect(zk.calls.filter((c) => c === 'getData /')).toHaveLength(1);
    const closing = client.close();
    let bound: NodeJS.Timeout | undefined;
    const stillWaiting = new Promise((resolve) => {
      bound = setTimeout(() => resolve('still waiting 2 s after close()'), 2_000);
    });
    expect(await Promise.race([outcome, stillWaiting])).toMatchObject({ name: 'ClientClosedError', code: 'CLIENT_CLOSED' });
    clearTimeout(bound);
    await closing;
    expect(zk.calls.filter((c) => c === 'getData /')).toHaveLength(1);
  });

  it('operations after close reject with ClientClosedError', async () => {
    const { client } = setup();
    client.start();
    await client.close();
    await expect(client.getData('/x')).rejects.toMatchObject({ name: 'ClientClosedError', code: 'CLIENT_CLOSED' });
    await expect(client.blockUntilConnected()).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
  });
});

describe('findProtectedNode (CURATOR-498)', () => {
  it('discards an ephemeral node of another session and reports none', async () => {
    const zk = new FakeZooKeeper();
    const ours = zk.factory(false)({ connectString: 'x:1', sessionTimeoutMs: 1_000 }) as FakeTransport;
    const theirs = zk.factory(false)({ connectString: 'x:1', sessionTimeoutMs: 1_000 }) as FakeTransport;
    ours.connect();
    theirs.connect();
    const uuid = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
    await theirs.create('/p', Buffer.alloc(0), 'PERSISTENT', OPEN_ACL);
    const stale = await theirs.create(`/p/_c_${uuid}-lock-`, Buffer.alloc(0), 'EPHEMERAL_SEQUENTIAL', OPEN_ACL);
    const discarded: string[] = [];
    expect(await findProtectedNode(ours, '/p', uuid, true, (p) => discarded.push(p))).toBeUndefined();
    expect(discarded).toEqual([stale]);
    const mine = await ours.create(`/p/_c_${uuid}-lock-`, Buffer.alloc(0), 'EPHEMERAL_SEQUENTIAL', OPEN_ACL);
    await theirs.delete(stale, -1);
    expect(await findProtectedNode(ours, '/p', uuid, true, () => undefined)).toBe(mine);
  });
});
