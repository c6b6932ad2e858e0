import { createHash } from 'node:crypto';
import { InvalidArgumentError, Perms, ZkClient, type WatchEvent } from '../../src';
import { eventually, randomRoot, watchNode } from '../helpers';
import { useZooKeeper } from '../fixture';
import { InstrumentedTransports } from '../instrumentedTransports';

describe('ZkClient operations', () => {
  const zk = useZooKeeper();
  let client: ZkClient;
  let root: string;

  beforeEach(async () => {
    client = await zk.clients.connect({ connectString: zk.server.connectString });
    root = randomRoot();
    await client.create(root);
  });

  it('creates nodes in every mode', async () => {
    expect(await client.create(`${root}/p`, { data: 'x' })).toBe(`${root}/p`);
    const e = await client.create(`${root}/e`, { mode: 'EPHEMERAL' });
    expect((await client.exists(e))?.ephemeralOwner).toBe(client.sessionId);
    const ps = await client.create(`${root}/ps-`, { mode: 'PERSISTENT_SEQUENTIAL' });
    const es = await client.create(`${root}/es-`, { mode: 'EPHEMERAL_SEQUENTIAL' });
    expect(ps).toMatch(new RegExp(`^${root}/ps-\\d{10}$`));
    expect(es).toMatch(new RegExp(`^${root}/es-\\d{10}$`));
    // The counter belongs to the parent: the second sequential child gets the next number.
    expect(Number(es.slice(-10))).toBe(Number(ps.slice(-10)) + 1);
    const ttl = await client.create(`${root}/ttl`, { mode: 'PERSISTENT_WITH_TTL', ttlMs: 60_000 });
    expect(await client.exists(ttl)).not.toBeNull();
    const ttlSeq = await client.create(`${root}/ttls-`, { mode: 'PERSISTENT_SEQUENTIAL_WITH_TTL', ttlMs: 60_000 });
    expect(ttlSeq).toMatch(/ttls-\d{10}$/);
  });

  it('writes the default data (the local address) when none is given, as Curator does', async () => {
    const p = await client.create(`${root}/d`);
    expect((await client.getData(p)).data.toString()).toBe(client.options.defaultData.toString());
    expect(client.options.defaultData.length).toBeGreaterThan(0);
  });

  it('creates missing parents as containers, which the server reaps once empty', async () => {
    const child = await client.create(`${root}/a/b/c`, { mode: 'EPHEMERAL', createParents: 'container' });
    expect((await client.getData(`${root}/a`)).data.length).toBe(0);
    const parentGone = (await watchNode(client, `${root}/a/b`)).next;
    await client.delete(child);
    expect(await parentGone).toBe('deleted');
  });

  it('creates missing parents again when one it found goes before its child is made (a reaped container)', async () => {
    const traced = new InstrumentedTransports();
    const creator = await zk.clients.connect({ connectString: zk.server.connectString, transportFactory: traced.factory });
    await client.create(`${root}/a`);
    // The creator finds `a`, creates `a/b`, and before it creates `a/b/c` under it, both go (as
    // the server reaps a container once its last child has gone).
    const held = traced.holdNext('create', `${root}/a/b`);
    const created = creator.create(`${root}/a/b/c/node`, { createParents: 'container' });
    await held.reached;
    await client.delete(`${root}/a`, { recursive: true });
    held.release();
    expect(await created).toBe(`${root}/a/b/c/node`);
    expect(traced.calls.filter((c) => c === `create ${root}/a`)).toHaveLength(2);
  });

  it('creates missing parents as persistent nodes when asked', async () => {
    await client.create(`${root}/x/y`, { createParents: 'persistent' });
    await client.delete(`${root}/x/y`);
    // A persistent parent stays: sync, then look.
    await client.sync(`${root}/x`);
    expect(await client.exists(`${root}/x`)).not.toBeNull();
  });

  it('fails NONODE without createParents, and NODEEXISTS for an existing node', async () => {
    await expect(client.create(`${root}/missing/child`)).rejects.toMatchObject({ code: 'NONODE', path: `${root}/missing/child` });
    await client.create(`${root}/dup`);
    await expect(client.create(`${root}/dup`)).rejects.toMatchObject({ code: 'NODEEXISTS' });
  });

  it('reads, writes and checks versions', async () => {
    await client.create(`${root}/v`, { data: 'one' });
    const s1 = await client.setData(`${root}/v`, 'two', { version: 0 });
    expect(s1.version).toBe(1);
    await expect(client.setData(`${root}/v`, 'three', { version: 0 })).rejects.toMatchObject({ code: 'BADVERSION' });
    const { data, stat } = await client.getData(`${root}/v`);
    expect(data.toString()).toBe('two');
    expect(stat.mzxid).toBeGreaterThan(stat.czxid);
    await expect(client.delete(`${root}/v`, { version: 0 })).rejects.toMatchObject({ code: 'BADVERSION' });
    await client.delete(`${root}/v`, { version: 1 });
    expect(await client.exists(`${root}/v`)).toBeNull();
  });

  it('lists children with the parent stat', async () => {
    await client.create(`${root}/c1`);
    await client.create(`${root}/c2`);
    const { children, stat } = await client.getChildrenWithStat(root);
    expect(children.sort()).toEqual(['c1', 'c2']);
    expect(stat.numChildren).toBe(2);
    expect(stat.pzxid).toBeGreaterThan(stat.czxid);
  });

  it('deletes recursively, and quietly when asked', async () => {
    await client.create(`${root}/t/a/b`, { createParents: 'persistent' });
    await client.create(`${root}/t/c`);
    await expect(client.delete(`${root}/t`)).rejects.toMatchObject({ code: 'NOTEMPTY' });
    await client.delete(`${root}/t`, { recursive: true });
    expect(await client.exists(`${root}/t`)).toBeNull();
    await expect(client.delete(`${root}/t`)).rejects.toMatchObject({ code: 'NONODE' });
    await client.delete(`${root}/t`, { quietly: true });
  });

  it('ensurePath creates every missing node and leaves existing ones alone', async () => {
    await client.create(`${root}/keep`, { data: 'kept' });
    await client.ensurePath(`${root}/keep/deep/er`);
    await client.ensurePath(`${root}/keep/deep/er`);
    expect((await client.getData(`${root}/keep`)).data.toString()).toBe('kept');
    expect(await client.exists(`${root}/keep/deep/er`)).not.toBeNull();
  });

  it('works under a namespace: paths are relative, nodes live under /<namespace>', async () => {
    const ns = randomRoot('ns').slice(1);
    const scoped = await zk.clients.connect({ connectString: zk.server.connectString, namespace: `${ns}/app` });
    expect(await scoped.create('/node', { data: 'n' })).toBe('/node');
    expect((await client.getData(`/${ns}/app/node`)).data.toString()).toBe('n');
    expect(await scoped.getChildren('/')).toEqual(['node']);
    const seq = await scoped.create('/s-', { mode: 'EPHEMERAL_SEQUENTIAL' });
    expect(seq).toMatch(/^\/s-\d{10}$/);
    const events: WatchEvent[] = [];
    await scoped.getData('/node', { watcher: (e) => events.push(e) });
    await client.setData(`/${ns}/app/node`, 'changed');
    await eventually('the watch', () => events.length > 0);
    expect(events).toEqual([{ type: 'changed', path: '/node' }]);
  });

  it('one-shot watches: each fires once, with the right event', async () => {
    const seen: string[] = [];
    const record = (e: WatchEvent) => seen.push(`${e.type} ${e.path}`);
    expect(await client.exists(`${root}/w`, { watcher: record })).toBeNull();
    await client.create(`${root}/w`);
    await client.getData(`${root}/w`, { watcher: record });
    await client.getChildren(`${root}/w`, { watcher: record });
    await client.create(`${root}/w/kid`);
    await client.setData(`${root}/w`, 'd');
    await client.setData(`${root}/w`, 'again');
    await eventually('three events', () => seen.length >= 3);
    await client.sync(root);
    expect(seen.sort()).toEqual([`changed ${root}/w`, `child ${root}/w`, `created ${root}/w`].sort());
  });

  it('digest auth and ACLs: only the credentialed client may read', async () => {
    const digest = createHash('sha1').update('alice:secret').digest('base64');
    const alice = await zk.clients.connect({ connectString: zk.server.connectString, authInfo: [{ scheme: 'digest', auth: 'alice:secret' }] });
    await alice.create(`${root}/secret`, { data: 'hidden' });
    await alice.setACL(`${root}/secret`, [{ perms: Perms.ALL, scheme: 'digest', id: `alice:${digest}` }]);
    const { acl } = await alice.getACL(`${root}/secret`);
    expect(acl).toEqual([{ perms: Perms.ALL, scheme: 'digest', id: `alice:${digest}` }]);
    expect((await alice.getData(`${root}/secret`)).data.toString()).toBe('hidden');
    await expect(client.getData(`${root}/secret`)).rejects.toMatchObject({ code: 'NOAUTH' });
  });

  it('an ACL provider sets the ACL of created nodes', async () => {
    const readOnly = [{ perms: Perms.READ, scheme: 'world', id: 'anyone' }];
    const provided = await zk.clients.connect({
      connectString: zk.server.connectString,
      aclProvider: { getDefaultAcl: () => readOnly, getAclForPath: () => readOnly },
    });
    const p = await provided.create(`${root}/ro`, { data: 'r' });
    expect((await client.getACL(p)).acl).toEqual(readOnly);
    await expect(client.setData(p, 'w')).rejects.toMatchObject({ code: 'NOAUTH' });
  });

  it('an aborted create leaves no node behind, even when the server made it', async () => {
    const controller = new AbortController();
    const pending = client.create(`${root}/aborted`, { mode: 'PERSISTENT', signal: controller.signal });
    controller.abort(new Error('changed my mind'));
    await expect(pending).rejects.toThrow('changed my mind');
    // Whether or not the create reached the server, the node ends up absent.
    await eventually('no node', async () => (await client.exists(`${root}/aborted`)) === null && client.pendingBackgroundDeletes === 0);
  });

  it('rejects bad input with InvalidArgumentError before any I/O', async () => {
    const bad: Array<() => Promise<unknown>> = [
      () => client.create('relative'),
      () => client.create(`${root}/x/`),
      () => client.create(`${root}//x`),
      () => client.create(`${root}/./x`),
      () => client.create(`${root}/../x`),
      () => client.create(`${root}/nul\u0000`),
      () => client.create(`${root}/big`, { data: Buffer.alloc(1024 * 1024 + 1) }),
      () => client.create(`${root}/m`, { mode: 'NOPE' as never }),
      () => client.create(`${root}/t`, { mode: 'PERSISTENT_WITH_TTL' }),
      () => client.create(`${root}/t`, { ttlMs: 5 }),
      () => client.create(`${root}/t`, { data: 42 as never }),
      () => client.delete(`${root}/x`, { version: -2 }),
      () => client.setData(`${root}/x`, 'y', { version: Number.NaN }),
      () => client.getData(`${root}/x`, { signal: 'nope' as never }),
      () => client.exists(`${root}/x`, { watcher: 'nope' as never }),
      () => client.blockUntilConnected({ timeoutMs: -1 }),
      () => client.blockUntilConnected({ timeoutMs: Number.NaN }),
    ];
    for (const call of bad) {
      await expect(call()).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect(await client.getChildren(root)).toEqual([]);
  });
});
