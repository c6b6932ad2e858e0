import { createHash } from 'node:crypto';
import { DistributedAtomicLong } from '../../recipes/atomic';
import { DistributedDoubleBarrier } from '../../recipes/barriers';
import { LeaderLatch, LeaderSelector } from '../../recipes/leader';
import { InterProcessMutex, InterProcessReadWriteLock, InterProcessSemaphoreV2 } from '../../recipes/locks';
import { GroupMember, PersistentNode } from '../../recipes/nodes';
import { DistributedQueue, SimpleDistributedQueue } from '../../recipes/queue';
import { SharedCount } from '../../recipes/shared';
import { Perms, UnsupportedError, type ACL, type ZkClient, type ZkClientOptions } from '../../src';
import { TestingServer } from '../../src/testing';
import { deferred } from '../../src/util/async';
import { Clients, TEST_TRANSPORT, eventually, randomRoot, timing } from '../helpers';
import { InstrumentedTransports } from '../instrumentedTransports';
import { SourceAddressProxy } from './sourceAddressProxy';

/**
 * With an aclProvider that restricts every node to one identity, a client without it is refused
 * every node a recipe, a transaction or the client itself makes: the nodes, their parents and the
 * namespace. Two identities: a digest user, and an `ip` ACL, where the intruder connects from
 * another loopback address (127.0.0.2) through a relay.
 *
 * "From the moment of creation": a node whose ACL was set after its create has an ACL version
 * (`aversion`) of 1. On the protocol transport every node has 0: the create request carried the
 * ACL. The native binding cannot (see README), so there the ACL is set right after: 1.
 */

const OWNER = 'owner:secret';
const DIGEST_ACL: readonly ACL[] = [{ perms: Perms.ALL, scheme: 'digest', id: `owner:${createHash('sha1').update(OWNER).digest('base64')}` }];
const IP_ACL: readonly ACL[] = [{ perms: Perms.ALL, scheme: 'ip', id: '127.0.0.1' }];
const OPEN: readonly ACL[] = [{ perms: Perms.ALL, scheme: 'world', id: 'anyone' }];
/** The ACL version of a node created with its ACL, and of one given it by a setACL after. */
const EXPECTED_AVERSION = TEST_TRANSPORT === 'protocol' ? 0 : 1;

/** A recipe (or plain client use) that makes its nodes under the owner's namespace and keeps them until `release`. */
interface Case {
  /** Paths (in the namespace) that must be there while it runs: the parents it makes, at least. */
  readonly present: readonly string[];
  /** How many nodes of names not known in advance (lock nodes, items, members) it has there, at least. */
  readonly more: number;
  make(owner: ZkClient, track: (close: () => unknown) => void): Promise<void>;
}

const wait = { timeoutMs: timing(20_000) };

const CASES: Record<string, Case> = {
  'InterProcessMutex (lock path and lock node)': {
    present: ['/locks', '/locks/mutex'],
    more: 1,
    async make(owner, track) {
      const lease = await new InterProcessMutex(owner, '/locks/mutex').acquire(wait);
      track(() => lease.release());
    },
  },
  'InterProcessReadWriteLock': {
    present: ['/locks', '/locks/rw'],
    more: 1,
    async make(owner, track) {
      const lease = await new InterProcessReadWriteLock(owner, '/locks/rw').readLock().acquire(wait);
      track(() => lease.release());
    },
  },
  'InterProcessSemaphoreV2 (leases and locks)': {
    present: ['/sem', '/sem/leases', '/sem/locks'],
    more: 3,
    async make(owner, track) {
      const [held] = await new InterProcessSemaphoreV2(owner, '/sem', { maxLeases: 1 }).acquire(wait);
      track(() => held.release());
      // A second acquirer waits for a lease holding the semaphore's internal lock: its node under `locks`
      // stays, and so does the lease node it makes next (as Curator's does) while it waits.
      const stop = new AbortController();
      const waiting = new InterProcessSemaphoreV2(owner, '/sem', { maxLeases: 1 }).acquire({ signal: stop.signal });
      waiting.catch(() => undefined);
      track(() => stop.abort());
      const count = async (path: string) => (await owner.getChildren(path).catch(() => [])).length;
      await eventually('the waiting lock node and lease node', async () => (await count('/sem/locks')) > 0 && (await count('/sem/leases')) > 1);
    },
  },
  LeaderLatch: {
    present: ['/leader', '/leader/latch'],
    more: 1,
    async make(owner, track) {
      const latch = new LeaderLatch(owner, '/leader/latch');
      latch.start();
      track(() => latch.close());
      await latch.await(wait);
    },
  },
  LeaderSelector: {
    present: ['/leader', '/leader/selector'],
    more: 1,
    async make(owner, track) {
      let leading = false;
      const selector = new LeaderSelector(owner, '/leader/selector', {
        takeLeadership: (signal) =>
          new Promise<void>((resolve) => {
            leading = true;
            signal.addEventListener('abort', () => resolve());
          }),
      });
      selector.start();
      track(() => selector.close());
      await eventually('leadership', () => leading);
    },
  },
  DistributedDoubleBarrier: {
    present: ['/barrier', '/barrier/double'],
    more: 1,
    async make(owner, track) {
      const barrier = new DistributedDoubleBarrier(owner, '/barrier/double', 1);
      await barrier.enter(wait);
      track(() => barrier.leave(wait));
    },
  },
  'SimpleDistributedQueue (items)': {
    present: ['/queue', '/queue/items'],
    more: 1,
    async make(owner) {
      await new SimpleDistributedQueue(owner, '/queue/items').offer('payload');
    },
  },
  'DistributedQueue, lock-safe, with a requeued item': {
    present: ['/dq', '/dq/items', '/dq/locks'],
    more: 2,
    async make(owner, track) {
      const queue = new DistributedQueue<string>(owner, '/dq/items', { lockPath: '/dq/locks', errorMode: 'requeue' });
      track(() => queue.close());
      await queue.put('payload');
      const done = deferred<void>();
      track(() => done.resolve());
      let calls = 0;
      queue.start(async () => {
        if (++calls === 1) throw new Error('fail once: requeue');
        // The requeued copy is in hand, with its lock node: keep both while the intruder tries.
        await done.promise;
      });
      await eventually('the requeued item handed out again', () => calls === 2);
    },
  },
  GroupMember: {
    present: ['/group', '/group/members'],
    more: 1,
    async make(owner, track) {
      const member = new GroupMember(owner, '/group/members', 'one', { payload: 'p' });
      member.start();
      track(() => member.close());
      await member.waitForInitialized(wait);
    },
  },
  'DistributedAtomicLong': {
    present: ['/atomic', '/atomic/long'],
    more: 0,
    async make(owner) {
      await new DistributedAtomicLong(owner, '/atomic/long').increment();
    },
  },
  SharedCount: {
    present: ['/shared', '/shared/count'],
    more: 0,
    async make(owner, track) {
      const count = new SharedCount(owner, '/shared/count', 7);
      await count.start();
      track(() => count.close());
    },
  },
  PersistentNode: {
    present: ['/nodes', '/nodes/persistent'],
    more: 0,
    async make(owner, track) {
      const node = new PersistentNode(owner, '/nodes/persistent', { mode: 'EPHEMERAL', data: 'here' });
      node.start();
      track(() => node.close());
      await node.waitForInitialCreate(wait);
    },
  },
  'a transaction': {
    present: ['/tx', '/tx/a'],
    more: 1,
    async make(owner) {
      const tx = owner.transaction().create('/tx').create('/tx/a', { data: 'secret' }).create('/tx/a/s-', { mode: 'PERSISTENT_SEQUENTIAL' });
      if (TEST_TRANSPORT === 'protocol') await tx.commit();
      else {
        // No multi on the native binding: the transaction is refused, and its nodes made one by one.
        await expect(tx.commit()).rejects.toBeInstanceOf(UnsupportedError);
        await owner.create('/tx/a/s-', { mode: 'PERSISTENT_SEQUENTIAL', createParents: 'persistent' });
      }
    },
  },
  'ensurePath and createParents': {
    present: ['/plain', '/plain/e', '/plain/e/f', '/plain/e/f/g', '/plain/e/cont', '/plain/c', '/plain/c/d', '/plain/c/d/node'],
    more: 0,
    async make(owner) {
      await owner.ensurePath('/plain/e/f/g');
      await owner.ensurePath('/plain/e/cont', { container: true });
      await owner.create('/plain/c/d/node', { data: 'x', createParents: 'container' });
    },
  },
};

/** `top` and everything under it, parents first. */
async function treeOf(client: ZkClient, top: string): Promise<string[]> {
  const children = await client.getChildren(top);
  const below = await Promise.all(children.map((child) => treeOf(client, `${top}/${child}`)));
  return [top, ...below.flat()];
}

describe.each([
  ['digest', DIGEST_ACL],
  ['ip', IP_ACL],
] as const)('an aclProvider restricting to one %s identity', (identity, acl) => {
  let server: TestingServer;
  let relay: SourceAddressProxy | undefined;
  const clients = new Clients();
  const releases: Array<() => unknown> = [];

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    if (identity === 'ip') relay = await SourceAddressProxy.start({ host: '127.0.0.1', port: server.port }, '127.0.0.2');
  });
  afterEach(async () => {
    for (const release of releases.splice(0).reverse()) await release();
    await clients.closeAll();
  });
  afterAll(async () => {
    await relay?.close();
    await server.close();
  });

  /** The owner's identity: the digest credentials, or (ip) a direct connection from 127.0.0.1. */
  const credentials = (): Partial<ZkClientOptions> => (identity === 'digest' ? { authInfo: [{ scheme: 'digest', auth: OWNER }] } : {});
  const intruderConnectString = () => (identity === 'digest' ? server.connectString : relay!.connectString);

  it.each(Object.keys(CASES))('%s: every node it makes, parents and namespace included, refuses a client without the identity', async (name) => {
    const top = randomRoot('acl');
    const owner = await clients.connect({
      connectString: server.connectString,
      namespace: `${top.slice(1)}/app`,
      aclProvider: { getDefaultAcl: () => acl, getAclForPath: () => acl },
      ...credentials(),
    });
    const admin = await clients.connect({ connectString: server.connectString, ...credentials() });
    const intruder = await clients.connect({ connectString: intruderConnectString() });

    await CASES[name].make(owner, (release) => releases.push(release));

    const nodes = await treeOf(admin, top);
    const { present, more } = CASES[name];
    for (const p of [top, `${top}/app`, ...present.map((p) => `${top}/app${p}`)]) expect(nodes).toContain(p);
    expect(nodes.length).toBeGreaterThanOrEqual(2 + present.length + more);
    for (const p of nodes) {
      const { acl: actual, stat } = await admin.getACL(p);
      expect({ p, acl: actual, aversion: stat.aversion }).toEqual({ p, acl, aversion: EXPECTED_AVERSION });
      const refused = { code: 'NOAUTH' };
      await expect(intruder.getData(p)).rejects.toMatchObject(refused);
      await expect(intruder.getChildren(p)).rejects.toMatchObject(refused);
      await expect(intruder.setData(p, 'mine')).rejects.toMatchObject(refused);
      await expect(intruder.setACL(p, OPEN)).rejects.toMatchObject(refused);
      await expect(intruder.create(`${p}/intruder`)).rejects.toMatchObject(refused);
      await expect(intruder.create(`${p}/intruder-`, { mode: 'EPHEMERAL_SEQUENTIAL' })).rejects.toMatchObject(refused);
      // The top node's parent is the root, whose ACL is not ours: there the delete fails for its children.
      await expect(intruder.delete(p)).rejects.toMatchObject(p === top ? { code: 'NOTEMPTY' } : refused);
    }
    // The owner still has every node, and all its rights on them.
    expect((await treeOf(admin, top)).sort()).toEqual([...nodes].sort());
  });
});

describe('the requests of a create with an aclProvider', () => {
  let server: TestingServer;
  const clients = new Clients();

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
  });
  afterEach(() => clients.closeAll());
  afterAll(() => server.close());

  it('one per node on the protocol transport (the ACL is in the create); a create then a setACL on the native one', async () => {
    const traced = new InstrumentedTransports();
    const top = randomRoot('acl');
    const ns = `${top}/app`;
    const client = await clients.connect({
      connectString: server.connectString,
      transportFactory: traced.factory,
      namespace: ns.slice(1),
      aclProvider: { getDefaultAcl: () => DIGEST_ACL, getAclForPath: () => null },
      authInfo: [{ scheme: 'digest', auth: OWNER }],
    });
    await client.exists('/');
    const from = traced.calls.length;
    const CREATES = 20;
    for (let i = 0; i < CREATES; i++) await client.create('/n-', { mode: 'PERSISTENT_SEQUENTIAL' });
    const sent = traced.calls.slice(from);
    expect(sent.filter((c) => c.startsWith('create ')).length).toBe(CREATES);
    expect(sent.length / CREATES).toBe(TEST_TRANSPORT === 'protocol' ? 1 : 2);

    // Parents too: the missing ones are created with the ACL; the namespace's nodes exist already.
    const before = traced.calls.length;
    await client.create('/p/q/leaf', { createParents: 'container' });
    const withAcl = (path: string) => (TEST_TRANSPORT === 'protocol' ? [`create ${path}`] : [`create ${path}`, `setACL ${path}`]);
    expect(traced.calls.slice(before)).toEqual([`create ${ns}/p/q/leaf`, `create ${top}`, `create ${ns}`, ...withAcl(`${ns}/p`), ...withAcl(`${ns}/p/q`), ...withAcl(`${ns}/p/q/leaf`)]);
    for (const p of [`${ns}/p`, `${ns}/p/q`, `${ns}/p/q/leaf`]) {
      const { acl, stat } = await client.getACL(p.slice(ns.length));
      expect({ p, acl, aversion: stat.aversion }).toEqual({ p, acl: DIGEST_ACL, aversion: EXPECTED_AVERSION });
    }
  });
});
