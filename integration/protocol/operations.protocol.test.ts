/**
 * The operations only the protocol transport has (create2, multi, multiRead, addWatch,
 * removeWatches, checkWatches, getEphemerals, getAllChildrenNumber, whoAmI), TTL and container
 * nodes, and the chroot, against a real server.
 */
import { createHash } from 'node:crypto';
import { isZkError, type WatchEvent } from '../../src';
import { ProtocolTransport } from '../../src/protocol/ProtocolTransport';
import { TestingServer } from '../../src/testing';
import { OPEN_ACL, type TransportOptions } from '../../src/transport/Transport';
import { nextEvent, randomRoot, timing } from '../helpers';

describe('protocol transport operations', () => {
  let server: TestingServer;
  const open: ProtocolTransport[] = [];

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((t) => t.close()));
  });
  afterAll(() => server.close());

  async function connect(options: Partial<TransportOptions> = {}): Promise<ProtocolTransport> {
    const t = new ProtocolTransport({ connectString: server.connectString, sessionTimeoutMs: 10_000, ...options });
    open.push(t);
    await nextEvent<void>((done) => t.on('connected', done), 'a connection');
    return t;
  }

  /** Collects watch events; `next(n)` waits until there are n. */
  function recorder() {
    const events: WatchEvent[] = [];
    let wake: () => void = () => undefined;
    const watcher = (e: WatchEvent) => {
      events.push(e);
      wake();
    };
    const next = async (n: number) => {
      const deadline = Date.now() + timing(10_000);
      while (events.length < n) {
        if (Date.now() > deadline) throw new Error(`${n} events expected, got ${JSON.stringify(events)}`);
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 100);
        });
      }
      return events.map((e) => `${e.type} ${e.path}`);
    };
    return { events, watcher, next };
  }

  it('create2 returns the stat; TTL and container nodes are created', async () => {
    const t = await connect();
    const root = randomRoot('ops');
    const { path, stat } = await t.create2(root, Buffer.from('abc'), 'PERSISTENT', OPEN_ACL);
    expect(path).toBe(root);
    expect(stat).toMatchObject({ version: 0, dataLength: 3, numChildren: 0, ephemeralOwner: 0n });
    expect(stat.czxid).toBeGreaterThan(0n);
    const seq = await t.create2(`${root}/e-`, Buffer.alloc(0), 'EPHEMERAL_SEQUENTIAL', OPEN_ACL);
    expect(seq.path).toMatch(/\/e-\d{10}$/);
    expect(seq.stat.ephemeralOwner).toBe(t.sessionId);
    expect(await t.create(`${root}/ttl`, Buffer.alloc(0), 'PERSISTENT_WITH_TTL', OPEN_ACL, 60_000)).toBe(`${root}/ttl`);
    expect(await t.create(`${root}/c`, Buffer.alloc(0), 'CONTAINER', OPEN_ACL)).toBe(`${root}/c`);
    expect((await t.getChildren(root)).children.sort()).toEqual(['c', seq.path.split('/').pop(), 'ttl'].sort());
  });

  it('multi commits all or nothing, with a result per operation', async () => {
    const t = await connect();
    const root = randomRoot('ops');
    await t.create(root, Buffer.alloc(0), 'PERSISTENT', OPEN_ACL);
    const ok = await t.multi([
      { type: 'check', path: root, version: 0 },
      { type: 'create', path: `${root}/a`, data: Buffer.from('1'), mode: 'PERSISTENT', acl: OPEN_ACL },
      { type: 'setData', path: `${root}/a`, data: Buffer.from('2'), version: 0 },
      { type: 'create', path: `${root}/t`, data: Buffer.alloc(0), mode: 'PERSISTENT_WITH_TTL', acl: OPEN_ACL, ttlMs: 60_000 },
      { type: 'delete', path: `${root}/t`, version: -1 },
    ]);
    expect(ok.map((r) => r.type)).toEqual(['check', 'create', 'setData', 'create', 'delete']);
    expect(ok[1]).toMatchObject({ type: 'create', path: `${root}/a` });
    expect(ok[2]).toMatchObject({ type: 'setData', stat: { version: 1 } });
    expect((await t.getData(`${root}/a`)).data.toString()).toBe('2');

    const failed = await t.multi([
      { type: 'create', path: `${root}/b`, data: Buffer.alloc(0), mode: 'PERSISTENT', acl: OPEN_ACL },
      { type: 'check', path: `${root}/a`, version: 0 },
      { type: 'delete', path: `${root}/a`, version: -1 },
    ]);
    expect(failed).toEqual([
      { type: 'error', code: 'OK', rc: 0 },
      { type: 'error', code: 'BADVERSION', rc: -103 },
      { type: 'error', code: 'RUNTIMEINCONSISTENCY', rc: -2 },
    ]);
    expect(await t.exists(`${root}/b`)).toBeNull();
  });

  it('multiRead reads several nodes in one request, each read succeeding or failing on its own', async () => {
    const t = await connect();
    const root = randomRoot('ops');
    await t.create(root, Buffer.from('r'), 'PERSISTENT', OPEN_ACL);
    await t.create(`${root}/x`, Buffer.alloc(0), 'PERSISTENT', OPEN_ACL);
    const results = await t.multiRead([
      { type: 'getData', path: root },
      { type: 'getChildren', path: root },
      { type: 'getData', path: `${root}/missing` },
    ]);
    expect(results[0]).toMatchObject({ type: 'getData', data: Buffer.from('r'), stat: { numChildren: 1 } });
    expect(results[1]).toEqual({ type: 'getChildren', children: ['x'] });
    expect(results[2]).toEqual({ type: 'error', code: 'NONODE', rc: -101 });
  });

  it('addWatch: a persistent watch fires again and again; a recursive one sees the subtree but no child events', async () => {
    const t = await connect();
    // A server before 3.9 keeps one watch mode per path and connection: the other mode on its own.
    const u = await connect();
    const writer = await connect();
    const root = randomRoot('ops');
    await t.create(root, Buffer.alloc(0), 'PERSISTENT', OPEN_ACL);
    const persistent = recorder();
    const recursive = recorder();
    await t.addWatch(root, 'PERSISTENT', persistent.watcher);
    await u.addWatch(root, 'PERSISTENT_RECURSIVE', recursive.watcher);
    await writer.setData(root, Buffer.from('1'), -1);
    await writer.setData(root, Buffer.from('2'), -1);
    await writer.create(`${root}/kid`, Buffer.alloc(0), 'PERSISTENT', OPEN_ACL);
    await writer.create(`${root}/kid/grandkid`, Buffer.alloc(0), 'PERSISTENT', OPEN_ACL);
    await writer.delete(`${root}/kid/grandkid`, -1);
    expect(await persistent.next(3)).toEqual([`changed ${root}`, `changed ${root}`, `child ${root}`]);
    expect(await recursive.next(5)).toEqual([`changed ${root}`, `changed ${root}`, `created ${root}/kid`, `created ${root}/kid/grandkid`, `deleted ${root}/kid/grandkid`]);
    // A 3.8 server sends no zxid with its notifications.
    expect(recursive.events[0].zxid).toBeUndefined();
  });

  it('removeWatches: the removed watcher hears it and nothing more; checkWatches tells what is set', async () => {
    const t = await connect();
    const writer = await connect();
    const root = randomRoot('ops');
    await t.create(root, Buffer.alloc(0), 'PERSISTENT', OPEN_ACL);
    const kept = recorder();
    const dropped = recorder();
    await t.getData(root, kept.watcher);
    await t.getData(root, dropped.watcher);
    await t.getChildren(root, dropped.watcher);
    await t.checkWatches(root, 'data', dropped.watcher);
    await t.removeWatches(root, 'children');
    await expect(t.checkWatches(root, 'children')).rejects.toMatchObject({ code: 'NOWATCHER' });
    await t.removeWatches(root, 'data', dropped.watcher);
    await t.checkWatches(root, 'data', kept.watcher);
    await expect(t.checkWatches(root, 'data', dropped.watcher)).rejects.toMatchObject({ code: 'NOWATCHER' });
    await writer.setData(root, Buffer.from('x'), -1);
    await writer.create(`${root}/kid`, Buffer.alloc(0), 'PERSISTENT', OPEN_ACL);
    expect(await kept.next(1)).toEqual([`changed ${root}`]);
    expect(await dropped.next(2)).toEqual([`removed ${root}`, `removed ${root}`]);
    // A sync is answered after anything the server sent before it: nothing more came.
    await t.sync(root);
    expect(dropped.events).toHaveLength(2);
    await expect(t.removeWatches(root, 'any')).rejects.toMatchObject({ code: 'NOWATCHER' });
  });

  it('getEphemerals, getAllChildrenNumber and whoAmI', async () => {
    const digest = createHash('sha1').update('alice:secret').digest('base64');
    const t = await connect();
    const root = randomRoot('ops');
    await t.create(root, Buffer.alloc(0), 'PERSISTENT', OPEN_ACL);
    await t.create(`${root}/p`, Buffer.alloc(0), 'PERSISTENT', OPEN_ACL);
    await t.create(`${root}/p/e1`, Buffer.alloc(0), 'EPHEMERAL', OPEN_ACL);
    await t.create(`${root}/e2`, Buffer.alloc(0), 'EPHEMERAL', OPEN_ACL);
    expect((await t.getEphemerals(root)).sort()).toEqual([`${root}/e2`, `${root}/p/e1`]);
    expect(await t.getEphemerals(`${root}/p`)).toEqual([`${root}/p/e1`]);
    expect(await t.getAllChildrenNumber(root)).toBe(3);
    await t.addAuth('digest', 'alice:secret');
    expect(await t.whoAmI()).toEqual(expect.arrayContaining([{ scheme: 'digest', id: 'alice' }]));
    await t.setACL(`${root}/p`, [{ perms: 31, scheme: 'digest', id: `alice:${digest}` }], -1);
    const other = await connect();
    await expect(other.getData(`${root}/p`)).rejects.toMatchObject({ code: 'NOAUTH' });
    expect((await t.getACL(`${root}/p`)).acl).toEqual([{ perms: 31, scheme: 'digest', id: `alice:${digest}` }]);
  });

  it('a chroot: paths in and out are relative to it, events and ephemerals included', async () => {
    const admin = await connect();
    const chroot = randomRoot('chroot');
    await admin.create(chroot, Buffer.alloc(0), 'PERSISTENT', OPEN_ACL);
    const t = await connect({ connectString: `${server.connectString}${chroot}` });
    const seen = recorder();
    expect(await t.exists('/n', seen.watcher)).toBeNull();
    expect(await t.create('/n', Buffer.from('in'), 'PERSISTENT', OPEN_ACL)).toBe('/n');
    expect(await seen.next(1)).toEqual(['created /n']);
    expect((await admin.getData(`${chroot}/n`)).data.toString()).toBe('in');
    const seq = await t.create2('/s-', Buffer.alloc(0), 'EPHEMERAL_SEQUENTIAL', OPEN_ACL);
    expect(seq.path).toMatch(/^\/s-\d{10}$/);
    expect(await t.getEphemerals('/')).toEqual([seq.path]);
    expect((await t.getChildren('/')).children.sort()).toEqual(['n', seq.path.slice(1)].sort());
    const multi = await t.multi([{ type: 'create', path: '/m', data: Buffer.alloc(0), mode: 'PERSISTENT', acl: OPEN_ACL }]);
    expect(multi[0]).toMatchObject({ type: 'create', path: '/m' });
    await t.delete('/m', -1);
    try {
      await t.getData('/missing');
      throw new Error('expected NONODE');
    } catch (err) {
      expect(isZkError(err, 'NONODE')).toBe(true);
      expect((err as { path?: string }).path).toBe('/missing');
    }
  });
});
