import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import * as prom from 'prom-client';
import { LeaderLatch, LeaderSelector } from '../../recipes/leader';
import { InterProcessMutex, InterProcessReadWriteLock, InterProcessSemaphoreV2, LockTimeoutError } from '../../recipes/locks';
import { DistributedQueue } from '../../recipes/queue';
import { METRICS_CHANNELS, exportPrometheusMetrics, type LeadershipEvent, type LockHoldEvent, type LockWaitEvent, type OperationEvent, type QueueEvent, type StateEvent } from '../../src';
import { eventually, randomRoot, timing } from '../helpers';
import { useZooKeeper } from '../fixture';

/** Collects what one channel publishes while a test runs. */
function record<E>(name: string): { events: E[]; stop(): void } {
  const events: E[] = [];
  const listener = (message: unknown) => events.push(message as E);
  subscribe(name, listener);
  return { events, stop: () => unsubscribe(name, listener) };
}

describe('metrics on diagnostics_channel', () => {
  let root: string;
  const stops: Array<() => void> = [];

  const zk = useZooKeeper({
    beforeClose: async () => {
        for (const stop of stops.splice(0)) stop();
      },
  });
  beforeEach(() => {
    root = randomRoot('metrics');
  });

  function listen<E>(name: string): E[] {
    const r = record<E>(name);
    stops.push(r.stop);
    return r.events;
  }

  it('client: each operation with its latency and code, and each state change', async () => {
    const operations = listen<OperationEvent>(METRICS_CHANNELS.operation);
    const states = listen<StateEvent>(METRICS_CHANNELS.state);
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    await client.create(root, { data: 'x' });
    await expect(client.getData(`${root}/missing`)).rejects.toMatchObject({ code: 'NONODE' });
    expect(states).toEqual([{ state: 'CONNECTED', previous: undefined, sessionId: client.sessionId }]);
    const create = operations.find((e) => e.operation === 'create' && e.path === root);
    expect(create).toMatchObject({ code: undefined, retries: 0 });
    expect(create?.durationMs).toBeGreaterThan(0);
    // The channel is the process's: a client of an earlier test file may still publish into it.
    expect(operations.find((e) => e.operation === 'getData' && e.path === `${root}/missing`)).toMatchObject({ path: `${root}/missing`, code: 'NONODE' });
  });

  it('locks: waits with their outcome, holds with theirs, for the mutex, the read-write lock and the semaphore', async () => {
    const waits = listen<LockWaitEvent>(METRICS_CHANNELS.lockWait);
    const holds = listen<LockHoldEvent>(METRICS_CHANNELS.lockHold);
    const [a, b] = [await zk.clients.connect({ connectString: zk.server.connectString }), await zk.clients.connect({ connectString: zk.server.connectString })];
    const mutex = `${root}/mutex`;
    const held = await new InterProcessMutex(a, mutex).acquire();
    await expect(new InterProcessMutex(b, mutex).acquire({ timeoutMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError);
    const ac = new AbortController();
    const aborted = new InterProcessMutex(b, mutex).acquire({ signal: ac.signal });
    ac.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    await held.release();
    expect(waits.map((e) => [e.recipe, e.path, e.outcome])).toEqual([
      ['mutex', mutex, 'acquired'],
      ['mutex', mutex, 'timeout'],
      ['mutex', mutex, 'aborted'],
    ]);
    expect(holds).toEqual([expect.objectContaining({ recipe: 'mutex', path: mutex, node: held.node, outcome: 'released' })]);

    const rw = new InterProcessReadWriteLock(a, `${root}/rw`);
    await (await rw.writeLock().acquire()).release();
    await (await rw.readLock().acquire()).release();
    const [lease] = await new InterProcessSemaphoreV2(a, `${root}/sem`, { maxLeases: 2 }).acquire();
    // A hold ended by a deletion from outside is 'lost', with the reason.
    const lost = new Promise((resolve) => lease.signal.addEventListener('abort', resolve));
    await b.delete(lease.node);
    await lost;
    expect(waits.slice(3).map((e) => e.recipe)).toEqual(['write', 'read', 'semaphore']);
    // The semaphore's internal mutex reports nothing of its own.
    expect(waits.filter((e) => e.path.endsWith('/locks'))).toEqual([]);
    expect(holds.slice(1).map((e) => [e.recipe, e.outcome, e.reason])).toEqual([
      ['write', 'released', undefined],
      ['read', 'released', undefined],
      ['semaphore', 'lost', 'NODE_DELETED'],
    ]);
  });

  it('leaders: leadership gained and lost, for the latch and the selector', async () => {
    const events = listen<LeadershipEvent>(METRICS_CHANNELS.leadership);
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const latch = new LeaderLatch(client, `${root}/latch`, { id: 'l' });
    latch.start();
    await latch.await({ timeoutMs: timing(10_000) });
    await latch.close();
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const selector = new LeaderSelector(client, `${root}/selector`, { id: 's', takeLeadership: async () => done() });
    selector.start();
    await finished;
    await selector.close();
    await eventually('both leaderships to end', () => events.length === 4);
    expect(events.map((e) => [e.recipe, e.id, e.event])).toEqual([
      ['latch', 'l', 'gained'],
      ['latch', 'l', 'lost'],
      ['selector', 's', 'gained'],
      ['selector', 's', 'lost'],
    ]);
    expect(events[1].ledMs).toBeGreaterThanOrEqual(0);
  });

  it('queues: items put, delivered and requeued', async () => {
    const events = listen<QueueEvent>(METRICS_CHANNELS.queue);
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const path = `${root}/q`;
    const queue = new DistributedQueue<string>(client, path, { lockPath: `${root}/locks` });
    let tries = 0;
    const handled = new Promise<void>((resolve) => {
      queue.start(async () => {
        // The first try fails, and the item is requeued.
        if (tries++ === 0) throw new Error('not yet');
        resolve();
      });
    });
    await queue.put('job');
    await handled;
    await queue.close();
    expect(events.map((e) => [e.path, e.event, e.items])).toEqual([
      [path, 'put', 1],
      [path, 'delivered', 1],
      [path, 'requeued', 1],
      [path, 'delivered', 1],
    ]);
  });

  it('exports to prom-client, and stops when asked', async () => {
    const registry = new prom.Registry();
    const stop = exportPrometheusMetrics(prom, { registry });
    stops.push(stop);
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    await (await new InterProcessMutex(client, `${root}/lock`).acquire()).release();
    const text = await registry.metrics();
    expect(text).toMatch(new RegExp(`zk_recipes_lock_wait_seconds_count\\{recipe="mutex",path="${root}/lock",outcome="acquired"\\} 1`));
    expect(text).toMatch(/zk_recipes_operation_seconds_count\{operation="create",code="OK"\} [1-9]/);
    expect(text).toMatch(/zk_recipes_state_changes_total\{state="CONNECTED"\} 1/);
    stop();
    await (await new InterProcessMutex(client, `${root}/lock`).acquire()).release();
    expect(await registry.metrics()).toMatch(new RegExp(`zk_recipes_lock_wait_seconds_count\\{recipe="mutex",path="${root}/lock",outcome="acquired"\\} 1`));
  });
});
