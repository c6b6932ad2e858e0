import { LeaderLatch, LeaderSelector } from '../../recipes/leader';
import { InterProcessMutex, InterProcessReadWriteLock, InterProcessSemaphoreV2, type Lease } from '../../recipes/locks';
import { DistributedDelayQueue, DistributedQueue, SimpleDistributedQueue } from '../../recipes/queue';
import type { LeaderReport } from '../../cli/leader';
import type { LocksReport } from '../../cli/locks';
import type { QueueReport } from '../../cli/queue';
import type { TreeNode, TreeReport } from '../../cli/tree';
import type { ZkClient } from '../../src';
import { TestingServer } from '../../src/testing';
import { Clients, childrenOf, eventually, randomRoot, timing } from '../helpers';
import { CuratorPeer } from '../interop/CuratorPeer';
import { cli, cliJson } from './cliTesting';

const PROTECTED = '_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-';
const hex = (id: bigint) => `0x${id.toString(16)}`;

describe('zk-recipes CLI views of nodes made by Curator and by zk-recipes', () => {
  let server: TestingServer;
  let peer: CuratorPeer;
  let client: ZkClient;
  let javaSession: string;
  const clients = new Clients();
  const closers: Array<() => Promise<unknown>> = [];
  let connect: string[];

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    peer = await CuratorPeer.start(server.connectString, { label: 'cli-peer' });
    javaSession = `0x${peer.sessionIdHex.replace(/^0x/, '').replace(/^0+/, '')}`;
    client = await clients.connect({ connectString: server.connectString });
    connect = ['--connect', server.connectString];
  });
  afterAll(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    await clients.closeAll();
    await peer?.close();
    await server?.close();
  });

  it('locks: a mutex held by Curator, with zk-recipes and Curator waiting, in order', async () => {
    const path = `${randomRoot('cli')}/mutex`;
    await peer.request('mutex.new', { name: 'm1', path });
    expect(await peer.request('mutex.acquire', { name: 'm1', timeoutMs: timing(10_000) })).toMatchObject({ acquired: true });
    const ours = new InterProcessMutex(client, path, { data: 'node-waiter' });
    const pending = ours.acquire({ timeoutMs: timing(30_000) });
    pending.catch(() => undefined);
    await eventually('our node', async () => (await childrenOf(client, path)).length === 2);
    await peer.request('mutex.new', { name: 'm2', path });
    const javaWaits = peer.request('mutex.acquire', { name: 'm2', timeoutMs: timing(30_000) });
    javaWaits.catch(() => undefined);
    await eventually("Curator's second node", async () => (await childrenOf(client, path)).length === 3);

    const report = await cliJson<LocksReport>(['locks', path, ...connect]);
    expect(report).toMatchObject({ command: 'locks', path, recipe: 'mutex', admitting: null, others: 0 });
    expect(Date.parse(report.at)).not.toBeNaN();
    expect(report.holders).toHaveLength(1);
    expect(report.waiting).toHaveLength(2);
    const [holder] = report.holders;
    const [first, second] = report.waiting;
    expect(holder).toMatchObject({ mode: 'exclusive', session: javaSession, data: { encoding: 'utf8' } });
    expect(holder.name).toMatch(new RegExp(`^${PROTECTED}lock-\\d{10}$`));
    expect(holder.path).toBe(`${path}/${holder.name}`);
    expect(holder.ageMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(holder.created)).not.toBeNaN();
    expect(first).toMatchObject({ session: hex(client.sessionId), data: { encoding: 'utf8', value: 'node-waiter', bytes: 11, truncated: false } });
    expect(second.session).toBe(javaSession);
    expect(Number(first.name.slice(-10))).toBeLessThan(Number(second.name.slice(-10)));

    const text = await cli(['locks', path, ...connect]);
    expect(text.code).toBe(0);
    expect(text.stderr).toBe('');
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`${path}  InterProcessMutex (or LeaderSelector): held, 2 waiting`);
    expect(lines[1]).toMatch(/^ {2}ROLE +NODE +SESSION +AGE +DATA$/);
    expect(lines[2]).toMatch(new RegExp(`^ {2}holder +${holder.name} +${javaSession} +\\d`));
    expect(lines[3]).toMatch(new RegExp(`^ {2}waiting 1 +${first.name} +${hex(client.sessionId)} +\\S+ +"node-waiter"$`));
    expect(lines[4]).toMatch(new RegExp(`^ {2}waiting 2 +${second.name} +${javaSession}`));

    await peer.request('mutex.release', { name: 'm1' });
    const lease = await pending;
    await lease.release();
    expect(await javaWaits).toMatchObject({ acquired: true });
    await peer.request('mutex.release', { name: 'm2' });
  });

  it('locks: a read-write lock with readers of both libraries holding and a writer queued before a reader', async () => {
    const path = `${randomRoot('cli')}/rw`;
    await peer.request('rwlock.new', { name: 'rw1', path });
    await peer.request('rwlock.acquireRead', { name: 'rw1', timeoutMs: timing(10_000) });
    const ours = new InterProcessReadWriteLock(client, path, { data: 'node' });
    const read = await ours.readLock().acquire({ timeoutMs: timing(10_000) });
    await peer.request('rwlock.new', { name: 'rw2', path });
    const writer = peer.request('rwlock.acquireWrite', { name: 'rw2', timeoutMs: timing(30_000) });
    writer.catch(() => undefined);
    await eventually("Curator's write node", async () => (await childrenOf(client, path)).length === 3);
    const other = await clients.connect({ connectString: server.connectString });
    const lateReader = new InterProcessReadWriteLock(other, path, { data: 'late' }).readLock().acquire({ timeoutMs: timing(30_000) });
    lateReader.catch(() => undefined);
    await eventually('the late reader', async () => (await childrenOf(client, path)).length === 4);

    const report = await cliJson<LocksReport>(['locks', path, ...connect]);
    expect(report.recipe).toBe('readWriteLock');
    expect(report.holders.map((n) => [n.mode, n.session])).toEqual([
      ['read', javaSession],
      ['read', hex(client.sessionId)],
    ]);
    expect(report.waiting.map((n) => [n.mode, n.session])).toEqual([
      ['write', javaSession],
      ['read', hex(other.sessionId)],
    ]);
    expect(report.waiting[0].name).toMatch(new RegExp(`^${PROTECTED}__WRIT__\\d{10}$`));
    const text = (await cli(['locks', path, ...connect])).stdout;
    expect(text).toContain('InterProcessReadWriteLock: read-locked by 2 readers, 2 waiting');
    expect(text).toMatch(/waiting 1 +write /);

    await peer.request('rwlock.releaseRead', { name: 'rw1' });
    await read.release();
    expect(await writer).toMatchObject({ acquired: true });
    const written = await cliJson<LocksReport>(['locks', path, ...connect]);
    expect(written.holders.map((n) => [n.mode, n.session])).toEqual([['write', javaSession]]);
    expect((await cli(['locks', path, ...connect])).stdout).toContain('InterProcessReadWriteLock: write-locked, 1 waiting');
    await peer.request('rwlock.releaseWrite', { name: 'rw2' });
    await (await lateReader).release();
  });

  it('locks: a semaphore, with the lease nodes and the line on its locks/ node', async () => {
    const path = `${randomRoot('cli')}/sem`;
    await peer.request('semaphore.new', { name: 's1', path, maxLeases: 1 });
    expect(await peer.request('semaphore.acquire', { name: 's1', qty: 1, timeoutMs: timing(10_000) })).toMatchObject({ acquired: true });
    const ours = new InterProcessSemaphoreV2(client, path, { maxLeases: 1, data: 'node' });
    const pending = ours.acquire({ timeoutMs: timing(30_000) });
    pending.catch(() => undefined);
    await eventually('our lease node', async () => (await childrenOf(client, `${path}/leases`)).length === 2);
    await peer.request('semaphore.new', { name: 's2', path, maxLeases: 1 });
    const javaWaits = peer.request('semaphore.acquire', { name: 's2', qty: 1, timeoutMs: timing(30_000) });
    javaWaits.catch(() => undefined);
    await eventually("Curator's acquirer in line", async () => (await childrenOf(client, `${path}/locks`)).length === 2);

    const report = await cliJson<LocksReport>(['locks', path, ...connect]);
    expect(report.recipe).toBe('semaphore');
    expect(report.holders.map((n) => [n.mode, n.session])).toEqual([
      ['lease', javaSession],
      ['lease', hex(client.sessionId)],
    ]);
    expect(report.holders[0].name).toMatch(new RegExp(`^leases/${PROTECTED}lease-\\d{10}$`));
    expect(report.admitting?.session).toBe(hex(client.sessionId));
    expect(report.admitting?.name).toMatch(new RegExp(`^locks/${PROTECTED}lock-\\d{10}$`));
    expect(report.waiting.map((n) => n.session)).toEqual([javaSession]);
    expect((await cli(['locks', path, ...connect])).stdout).toContain('InterProcessSemaphoreV2: 2 lease nodes, 2 acquirers in line');

    await peer.request('semaphore.releaseAll', { name: 's1' });
    const [lease]: Lease[] = await pending;
    await lease.release();
    expect(await javaWaits).toMatchObject({ acquired: true });
    await peer.request('semaphore.releaseAll', { name: 's2' });
  });

  it('leader: a LeaderLatch led by Curator, with a zk-recipes participant', async () => {
    const path = `${randomRoot('cli')}/latch`;
    await peer.request('latch.new', { name: 'l1', path, participantId: 'java-1' });
    await peer.request('latch.start', { name: 'l1' });
    await peer.waitForEvent({ event: 'isLeader', name: 'l1' });
    const ours = new LeaderLatch(client, path, { id: 'node-1' });
    closers.push(() => ours.close());
    ours.start();
    await eventually('our latch node', () => ours.ourPath !== undefined);

    const report = await cliJson<LeaderReport>(['leader', path, ...connect]);
    expect(report).toMatchObject({ command: 'leader', recipe: 'leaderLatch', others: 0 });
    expect(report.leader).toMatchObject({ id: 'java-1', isLeader: true, session: javaSession });
    expect(report.participants.map((p) => [p.id, p.isLeader, p.session])).toEqual([
      ['java-1', true, javaSession],
      ['node-1', false, hex(client.sessionId)],
    ]);
    expect(report.participants[1].path).toBe(ours.ourPath);
    const text = (await cli(['leader', path, ...connect])).stdout.split('\n');
    expect(text[0]).toBe(`${path}  LeaderLatch: leader "java-1", 2 participants`);
    expect(text[2]).toMatch(/^ {2}leader +"java-1" +_c_/);
    expect(text[3]).toMatch(/^ {2}participant +"node-1" +_c_/);

    await peer.request('latch.close', { name: 'l1' });
    await ours.await({ timeoutMs: timing(10_000) });
    expect((await cliJson<LeaderReport>(['leader', path, ...connect])).leader).toMatchObject({ id: 'node-1', session: hex(client.sessionId) });
  });

  it('leader: a LeaderSelector led by zk-recipes, with Curator in line', async () => {
    const path = `${randomRoot('cli')}/selector`;
    let release: () => void = () => undefined;
    const leading = new Promise<void>((resolve) => {
      const ours = new LeaderSelector(client, path, {
        id: 'node-sel',
        takeLeadership: () => {
          resolve();
          return new Promise<void>((done) => (release = done));
        },
      });
      closers.push(() => ours.close());
      ours.start();
    });
    await leading;
    await peer.request('selector.new', { name: 'sel', path, participantId: 'java-sel' });
    await peer.request('selector.start', { name: 'sel' });
    await eventually("Curator's selector node", async () => (await childrenOf(client, path)).length === 2);

    const report = await cliJson<LeaderReport>(['leader', path, ...connect]);
    expect(report.recipe).toBe('leaderSelector');
    expect(report.participants.map((p) => [p.id, p.isLeader])).toEqual([
      ['node-sel', true],
      ['java-sel', false],
    ]);
    // The same nodes are a mutex to `locks`.
    expect((await cliJson<LocksReport>(['locks', path, ...connect])).holders[0].data?.value).toBe('node-sel');

    release();
    await peer.waitForEvent({ event: 'takeLeadership', name: 'sel' });
    expect((await cliJson<LeaderReport>(['leader', path, ...connect])).leader?.id).toBe('java-sel');
    await peer.request('selector.release', { name: 'sel' });
    await peer.request('selector.close', { name: 'sel' });
  });

  it('queue: Curator and zk-recipes items of each DistributedQueue variant, and a SimpleDistributedQueue', async () => {
    const root = randomRoot('cli');
    const fifo = `${root}/fifo`;
    await peer.request('queue.new', { name: 'q', path: fifo, consume: false });
    await peer.request('queue.start', { name: 'q' });
    await peer.request('queue.put', { name: 'q', value: 'from-java' });
    const ours = new DistributedQueue<string>(client, fifo);
    closers.push(() => ours.close());
    await ours.put('from-node');
    const fifoReport = await cliJson<QueueReport>(['queue', fifo, ...connect]);
    expect(fifoReport).toMatchObject({ command: 'queue', recipe: 'distributedQueue', variants: ['fifo'], depth: 2, next: 'queue-0000000000', delay: null, itemLocks: false });
    expect(fifoReport.oldest).toMatchObject({ name: 'queue-0000000000' });
    expect(fifoReport.oldest?.ageMs).toBeGreaterThanOrEqual(0);
    expect((await cli(['queue', fifo, ...connect])).stdout).toMatch(new RegExp(`^${fifo} {2}DistributedQueue \\(fifo\\): depth 2, oldest \\S+\\n {2}oldest {2}queue-0000000000 `));

    const priority = `${root}/priority`;
    await peer.request('queue.new', { name: 'pq', path: priority, kind: 'priority', consume: false });
    await peer.request('queue.start', { name: 'pq' });
    for (const [value, p] of [['low', 10], ['high', -5]] as const) await peer.request('queue.put', { name: 'pq', value, priority: p });
    const priorityReport = await cliJson<QueueReport>(['queue', priority, ...connect]);
    expect(priorityReport).toMatchObject({ variants: ['priority'], depth: 2, next: 'queue-0FFFFFFFB0000000001' });
    // The oldest is the first put, though it goes last.
    expect(priorityReport.oldest?.name).toBe('queue-10000000A0000000000');

    const delay = `${root}/delay`;
    await peer.request('queue.new', { name: 'dq', path: delay, kind: 'delay', consume: false });
    await peer.request('queue.start', { name: 'dq' });
    const later = Date.now() + 3_600_000;
    await peer.request('queue.put', { name: 'dq', value: 'later', delayUntilEpochMs: later });
    const ourDelay = new DistributedDelayQueue<string>(client, delay);
    closers.push(() => ourDelay.close());
    await ourDelay.put('now', Date.now() - 1_000);
    const delayReport = await cliJson<QueueReport>(['queue', delay, ...connect]);
    expect(delayReport).toMatchObject({ variants: ['delay'], depth: 2, delay: { due: 1, later: 1, nextDueAt: new Date(later).toISOString() } });
    expect(delayReport.next).toMatch(/^queue-\|[0-9A-F]+\|0000000001$/);
    expect((await cli(['queue', delay, ...connect])).stdout).toMatch(/delay {3}1 due now, 1 later, the next in (59m\d\ds|1h00m)/);

    const id = `${root}/id`;
    await peer.request('queue.new', { name: 'iq', path: id, kind: 'id', consume: false });
    await peer.request('queue.start', { name: 'iq' });
    await peer.request('queue.put', { name: 'iq', value: 'a', itemId: 'order/42' });
    expect(await cliJson<QueueReport>(['queue', id, ...connect])).toMatchObject({ variants: ['id'], depth: 1, next: 'queue-|order_42|0000000000' });

    const simple = `${root}/simple`;
    await peer.request('squeue.new', { name: 'sq', path: simple });
    await peer.request('squeue.offer', { name: 'sq', value: 'java' });
    await new SimpleDistributedQueue(client, simple).offer(Buffer.from('node'));
    expect(await cliJson<QueueReport>(['queue', simple, ...connect])).toMatchObject({
      recipe: 'simpleDistributedQueue',
      variants: [],
      depth: 2,
      next: 'qn-0000000000',
      oldest: { name: 'qn-0000000000' },
    });

    // A lock-safe queue's lock path holds EPHEMERAL nodes named after the items in hand.
    const locked = `${root}/locked`;
    const lockPath = `${root}/locked-locks`;
    const safe = new DistributedQueue<string>(client, locked, { lockPath });
    closers.push(() => safe.close());
    await safe.put('held');
    let finish: () => void = () => undefined;
    const inHand = new Promise<void>((resolve) =>
      safe.start(() => {
        resolve();
        return new Promise<void>((done) => (finish = done));
      }),
    );
    await inHand;
    expect(await cliJson<QueueReport>(['queue', lockPath, ...connect])).toMatchObject({ depth: 1, itemLocks: true });
    expect((await cli(['queue', lockPath, ...connect])).stdout).toContain('DistributedQueue item locks: 1 item in hand');
    finish();
    await eventually('the item to be consumed', async () => (await childrenOf(client, locked)).length === 0);
    expect(await cliJson<QueueReport>(['queue', locked, ...connect])).toMatchObject({ recipe: null, depth: 0, oldest: null, next: null });
  });

  it('tree: every recipe under a path with the role of each node', async () => {
    const root = randomRoot('cli');
    const mutex = new InterProcessMutex(client, `${root}/locks/orders`, { data: 'n' });
    const held = await mutex.acquire();
    await peer.request('mutex.new', { name: 'tm', path: `${root}/locks/orders` });
    const javaWaits = peer.request('mutex.acquire', { name: 'tm', timeoutMs: timing(30_000) });
    javaWaits.catch(() => undefined);
    await eventually("Curator's node", async () => (await childrenOf(client, `${root}/locks/orders`)).length === 2);
    await peer.request('latch.new', { name: 'tl', path: `${root}/leader`, participantId: 'java' });
    await peer.request('latch.start', { name: 'tl' });
    await peer.waitForEvent({ event: 'isLeader', name: 'tl' });
    await peer.request('semaphore.new', { name: 'ts', path: `${root}/sem`, maxLeases: 2 });
    await peer.request('semaphore.acquire', { name: 'ts', qty: 1, timeoutMs: timing(10_000) });
    const queue = new DistributedQueue<number>(client, `${root}/queue`);
    closers.push(() => queue.close());
    for (let i = 0; i < 30; i++) await queue.put(i);
    await client.create(`${root}/config`, { data: Buffer.from([0xff, 0x00]) });

    const report = await cliJson<TreeReport>(['tree', root, ...connect]);
    expect(report).toMatchObject({ command: 'tree', path: root });
    const find = (node: TreeNode, name: string): TreeNode => {
      const child = node.children.find((c) => c.name === name);
      if (!child) throw new Error(`no ${name} under ${node.path}: ${node.children.map((c) => c.name).join(', ')}`);
      return child;
    };
    const orders = find(find(report.root, 'locks'), 'orders');
    expect(orders).toMatchObject({ recipe: 'mutex', summary: 'InterProcessMutex (or LeaderSelector): held, 1 waiting', role: null });
    expect(orders.children.map((c) => [c.role, c.session])).toEqual([
      ['holder', hex(client.sessionId)],
      ['waiting', javaSession],
    ]);
    const leader = find(report.root, 'leader');
    expect(leader).toMatchObject({ recipe: 'leaderLatch' });
    expect(leader.children.map((c) => c.role)).toEqual(['leader']);
    const sem = find(report.root, 'sem');
    expect(sem.recipe).toBe('semaphore');
    expect(find(sem, 'leases')).toMatchObject({ recipe: 'semaphoreLeases' });
    expect(find(sem, 'leases').children.map((c) => c.role)).toEqual(['lease']);
    const q = find(report.root, 'queue');
    expect(q).toMatchObject({ recipe: 'distributedQueue', summary: 'DistributedQueue (fifo): depth 30', more: 5 });
    expect(q.children).toHaveLength(25);
    expect(q.children.map((c) => c.role)).toEqual(['next', ...Array(24).fill('item')]);
    expect(find(report.root, 'config')).toMatchObject({ recipe: null, role: null, children: [], more: 0, session: null });

    const text = (await cli(['tree', root, ...connect])).stdout;
    expect(text.split('\n')[0]).toBe(root);
    expect(text).toMatch(/│ {3}└── orders {2}InterProcessMutex \(or LeaderSelector\): held, 1 waiting\n/);
    expect(text).toMatch(new RegExp(`├── ${PROTECTED}lock-\\d{10} {2}holder {2}session ${hex(client.sessionId)} {2}\\S+\\n`));
    expect(text).toContain('└── … 5 more children');

    await held.release();
    expect(await javaWaits).toMatchObject({ acquired: true });
    await peer.request('mutex.release', { name: 'tm' });
    await peer.request('latch.close', { name: 'tl' });
    await peer.request('semaphore.releaseAll', { name: 'ts' });
  });
});
