/**
 * A property-based fuzz of the public API against a real server: invalid paths, oversized data,
 * wrong types, negative, NaN and huge timeouts, already-aborted signals and calls after close.
 *
 * The properties are the README's and the house rules':
 * - bad input gets a typed error (InvalidArgumentError) before any I/O; a function that returns a
 *   promise rejects it, and never throws; a constructor (or a method that returns no promise) may
 *   throw it;
 * - an already-aborted signal rejects with the signal's reason, before any I/O;
 * - a closed client rejects with ClientClosedError;
 * - a finite timeout beyond what a timer can hold means "no limit", or is refused;
 * - nothing crashes, no rejection goes unhandled (jestSetup fails the run), no node is left behind.
 */
import fc from 'fast-check';
import { ClientClosedError, InvalidArgumentError, MAX_DATA_BYTES, Perms, ZkError, type ZkClient } from '../../src';
import {
  DistributedQueue,
  InterProcessMutex,
  InterProcessReadWriteLock,
  InterProcessSemaphoreMutex,
  InterProcessSemaphoreV2,
  LeaderLatch,
  LeaderSelector,
  SharedCount,
  SimpleDistributedQueue,
  observeLeader,
  type Lease,
} from '../../recipes';
import { TestingServer } from '../../src/testing';
import { Clients, childrenOf, eventually, randomRoot, timing } from '../helpers';
import {
  badOptions,
  badTimeout,
  expectRejection,
  expectThrow,
  hugeTimeout,
  invalidPath,
  outcomeOf,
  oversizedData,
  show,
  reservedPath,
  segment,
  wrongType,
  type Outcome,
} from './badInput';

const OPEN_ACL = [{ perms: Perms.ALL, scheme: 'world', id: 'anyone' }];
/** Runs per property: the refusals come before any I/O, so they are cheap. */
const RUNS = 20;

const root = randomRoot('fuzz');
/** Where the fuzz may name valid paths: nothing must ever be created under it. */
const scratch = `${root}/scratch`;
const clients = new Clients();
let server: TestingServer;
let client: ZkClient;
let closed: ZkClient;
/** Holds the fixtures: a mutex, a latch that leads. */
let holder: ZkClient;
let heldLease: Lease;
let leadingLatch: LeaderLatch;
/** Objects made during a run, closed after it. */
const made: Array<{ close(): unknown }> = [];

const validPath = fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => `${scratch}/${s.join('/')}`);
const notAPath = fc.oneof(wrongType, fc.constant(undefined));

beforeAll(async () => {
  server = await TestingServer.start({ forceSync: false });
  client = await clients.connect({ connectString: server.connectString });
  holder = await clients.connect({ connectString: server.connectString });
  closed = await clients.connect({ connectString: server.connectString });
  await closed.close();
  heldLease = await new InterProcessMutex(holder, `${root}/held`).acquire({ timeoutMs: timing(10_000) });
  leadingLatch = new LeaderLatch(holder, `${root}/led`, { id: 'holder' });
  leadingLatch.start();
  await leadingLatch.await({ timeoutMs: timing(10_000) });
});

afterEach(async () => {
  await Promise.all(made.splice(0).map((m) => Promise.resolve(m.close()).catch(() => undefined)));
});

afterAll(async () => {
  await leadingLatch?.close();
  await heldLease?.release();
  await clients.closeAll();
  await server?.close();
});

/** Lets go of whatever a call that should have been refused got: a lease, leases, a node. */
async function undo(outcome: Outcome): Promise<void> {
  if (outcome.how !== 'resolved') return;
  const values = Array.isArray(outcome.value) ? outcome.value : [outcome.value];
  for (const v of values) {
    if (v && typeof (v as Lease).release === 'function') await (v as Lease).release().catch(() => undefined);
  }
}

/** Makes a recipe object and remembers it for closing. */
function keep<T>(value: T): T {
  if (value && typeof (value as { close?: unknown }).close === 'function') made.push(value as unknown as { close(): unknown });
  return value;
}

/** A recipe entry point: how to make the object, and the first call that may do I/O. */
interface RecipeEntry {
  readonly name: string;
  readonly make: (c: ZkClient, path: string) => unknown;
  readonly use: (made: never) => unknown;
  /** Whether only the constructor can refuse (its first call returns no promise). */
  readonly constructorOnly?: boolean;
}

const recipes: readonly RecipeEntry[] = [
  { name: 'InterProcessMutex.acquire', make: (c, p) => new InterProcessMutex(c, p), use: (m: InterProcessMutex) => m.acquire({ timeoutMs: 1_000 }) },
  { name: 'InterProcessMutex.tryAcquire', make: (c, p) => new InterProcessMutex(c, p), use: (m: InterProcessMutex) => m.tryAcquire() },
  { name: 'InterProcessMutex.runExclusive', make: (c, p) => new InterProcessMutex(c, p), use: (m: InterProcessMutex) => m.runExclusive(() => undefined, { timeoutMs: 1_000 }) },
  { name: 'InterProcessReadWriteLock.readLock().acquire', make: (c, p) => new InterProcessReadWriteLock(c, p), use: (rw: InterProcessReadWriteLock) => rw.readLock().acquire({ timeoutMs: 1_000 }) },
  { name: 'InterProcessReadWriteLock.writeLock().acquire', make: (c, p) => new InterProcessReadWriteLock(c, p), use: (rw: InterProcessReadWriteLock) => rw.writeLock().acquire({ timeoutMs: 1_000 }) },
  { name: 'InterProcessSemaphoreV2.acquire', make: (c, p) => new InterProcessSemaphoreV2(c, p, { maxLeases: 2 }), use: (s: InterProcessSemaphoreV2) => s.acquire({ timeoutMs: 1_000 }) },
  { name: 'InterProcessSemaphoreMutex.acquire', make: (c, p) => new InterProcessSemaphoreMutex(c, p), use: (s: InterProcessSemaphoreMutex) => s.acquire({ timeoutMs: 1_000 }) },
  { name: 'LeaderLatch.start', make: (c, p) => keep(new LeaderLatch(c, p)), use: (l: LeaderLatch) => l.start(), constructorOnly: true },
  { name: 'LeaderSelector.start', make: (c, p) => keep(new LeaderSelector(c, p, { takeLeadership: () => undefined })), use: (s: LeaderSelector) => s.start(), constructorOnly: true },
  { name: 'DistributedQueue.put', make: (c, p) => keep(new DistributedQueue<{ n: number }>(c, p)), use: (q: DistributedQueue<{ n: number }>) => q.put({ n: 1 }) },
  { name: 'SimpleDistributedQueue.offer', make: (c, p) => new SimpleDistributedQueue(c, p), use: (q: SimpleDistributedQueue) => q.offer('x') },
  { name: 'SharedCount.start', make: (c, p) => keep(new SharedCount(c, p, 0)), use: (s: SharedCount) => s.start() },
  { name: 'observeLeader', make: (c, p) => observeLeader(c, p), use: (g: AsyncGenerator<unknown>) => g.next() },
];

/** Refused by the constructor (InvalidArgumentError), or by the first call's rejection; never accepted. */
async function expectRecipeRefuses(entry: RecipeEntry, c: ZkClient, path: unknown, expected: abstract new (...args: never[]) => Error = InvalidArgumentError): Promise<void> {
  const construction = await outcomeOf(() => entry.make(c, path as string));
  if (construction.how === 'threw' || entry.constructorOnly) {
    expectThrow(`new ${entry.name.split('.')[0]}(${describePath(path)})`, construction, expected);
    return;
  }
  const use = await outcomeOf(() => entry.use(construction.value as never));
  await undo(use);
  expectRejection(`${entry.name} on ${describePath(path)}`, use, expected);
}

function describePath(path: unknown): string {
  return typeof path === 'string' ? JSON.stringify(path.length > 60 ? `${path.slice(0, 60)}…` : path) : typeof path;
}

/** Client operations that take a path, called with `path`. */
const clientOps: ReadonlyArray<[string, (c: ZkClient, path: unknown) => unknown]> = [
  ['create', (c, p) => c.create(p as string)],
  ['createAndListParent', (c, p) => c.createAndListParent(p as string, { mode: 'EPHEMERAL' })],
  ['delete', (c, p) => c.delete(p as string)],
  ['exists', (c, p) => c.exists(p as string)],
  ['getData', (c, p) => c.getData(p as string)],
  ['getChildren', (c, p) => c.getChildren(p as string)],
  ['getChildrenWithStat', (c, p) => c.getChildrenWithStat(p as string)],
  ['setData', (c, p) => c.setData(p as string, 'x')],
  ['sync', (c, p) => c.sync(p as string)],
  ['getACL', (c, p) => c.getACL(p as string)],
  ['setACL', (c, p) => c.setACL(p as string, OPEN_ACL)],
  ['ensurePath', (c, p) => c.ensurePath(p as string)],
];

describe('bad input to the public API', () => {
  describe('invalid paths and paths of the wrong type', () => {
    it.each(clientOps)('ZkClient.%s rejects them with InvalidArgumentError', async (name, op) => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(invalidPath(scratch), notAPath), async (path) => {
          expectRejection(`ZkClient.${name}(${describePath(path)})`, await outcomeOf(() => op(client, path)), InvalidArgumentError);
        }),
        { numRuns: RUNS },
      );
    });

    it.each(recipes.map((r) => [r.name, r] as const))('%s refuses them with InvalidArgumentError', async (_name, entry) => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(invalidPath(scratch), notAPath), async (path) => {
          await expectRecipeRefuses(entry, client, path);
        }),
        { numRuns: RUNS },
      );
    });

    it.each(recipes.map((r) => [r.name, r] as const))('%s refuses the server-owned /zookeeper subtree', async (_name, entry) => {
      await fc.assert(
        fc.asyncProperty(reservedPath, async (path) => {
          await expectRecipeRefuses(entry, client, path);
        }),
        { numRuns: 5 },
      );
    });
  });

  describe('oversized data', () => {
    const dataOps: ReadonlyArray<[string, (path: string, data: Buffer | string) => unknown]> = [
      ['ZkClient.create', (p, d) => client.create(p, { data: d })],
      ['ZkClient.setData', (p, d) => client.setData(p, d)],
      ['DistributedQueue.put', (p, d) => keep(new DistributedQueue<string>(client, p)).put(d.toString())],
      ['SimpleDistributedQueue.offer', (p, d) => new SimpleDistributedQueue(client, p).offer(d)],
    ];
    it.each(dataOps)('%s rejects data over MAX_DATA_BYTES with InvalidArgumentError', async (name, op) => {
      await fc.assert(
        fc.asyncProperty(validPath, oversizedData, async (path, data) => {
          expectRejection(`${name} with ${Buffer.byteLength(data)} bytes`, await outcomeOf(() => op(path, data)), InvalidArgumentError);
        }),
        { numRuns: 5 },
      );
    });

    const dataRecipes: readonly RecipeEntry[] = [
      { name: 'LeaderLatch id', make: (c, p) => keep(new LeaderLatch(c, p, { id: 'x'.repeat(MAX_DATA_BYTES + 1) })), use: (l: LeaderLatch) => l.start(), constructorOnly: true },
      { name: 'LeaderSelector id', make: (c, p) => keep(new LeaderSelector(c, p, { id: 'x'.repeat(MAX_DATA_BYTES + 1), takeLeadership: () => undefined })), use: (s: LeaderSelector) => s.start(), constructorOnly: true },
      { name: 'InterProcessMutex data', make: (c, p) => new InterProcessMutex(c, p, { data: Buffer.alloc(MAX_DATA_BYTES + 1) }), use: (m: InterProcessMutex) => m.acquire({ timeoutMs: 1_000 }) },
      { name: 'InterProcessReadWriteLock data', make: (c, p) => new InterProcessReadWriteLock(c, p, { data: Buffer.alloc(MAX_DATA_BYTES + 1) }), use: (rw: InterProcessReadWriteLock) => rw.writeLock().acquire({ timeoutMs: 1_000 }) },
      { name: 'InterProcessSemaphoreV2 data', make: (c, p) => new InterProcessSemaphoreV2(c, p, { maxLeases: 1, data: Buffer.alloc(MAX_DATA_BYTES + 1) }), use: (s: InterProcessSemaphoreV2) => s.acquire({ timeoutMs: 1_000 }) },
    ];
    it.each(dataRecipes.map((r) => [r.name, r] as const))('a %s over MAX_DATA_BYTES is refused with InvalidArgumentError', async (_name, entry) => {
      await fc.assert(
        fc.asyncProperty(validPath, async (path) => {
          await expectRecipeRefuses(entry, client, path);
        }),
        { numRuns: 2 },
      );
    });

    it('a request over the packet limit (a long path with data at MAX_DATA_BYTES) is refused before it is sent', async () => {
      // Its own client: a request the server drops takes the connection down with it.
      const own = await clients.connect({ connectString: server.connectString });
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1_100, max: 4_000 }), async (length) => {
          const path = `${scratch}/${'p'.repeat(length)}`;
          const signal = AbortSignal.timeout(timing(5_000));
          const outcome = await outcomeOf(() => own.create(path, { data: Buffer.alloc(MAX_DATA_BYTES), signal }));
          expectRejection(`create of ${MAX_DATA_BYTES} bytes at a path of ${length} characters`, outcome, InvalidArgumentError);
        }),
        { numRuns: 2 },
      );
    });
  });

  describe('options of the wrong type', () => {
    const optionOps: ReadonlyArray<[string, (options: unknown) => unknown]> = [
      ['ZkClient.create', (o) => client.create(`${scratch}/o`, o as never)],
      ['ZkClient.delete', (o) => client.delete(`${scratch}/o`, o as never)],
      ['ZkClient.exists', (o) => client.exists(`${scratch}/o`, o as never)],
      ['ZkClient.getData', (o) => client.getData(`${scratch}/o`, o as never)],
      ['ZkClient.setData', (o) => client.setData(`${scratch}/o`, 'x', o as never)],
      ['ZkClient.blockUntilConnected', (o) => client.blockUntilConnected(o as never)],
      ['InterProcessMutex.acquire', (o) => new InterProcessMutex(client, `${scratch}/m`).acquire(o as never)],
      ['InterProcessMutex.runExclusive', (o) => new InterProcessMutex(client, `${scratch}/m`).runExclusive(() => undefined, o as never)],
      ['InterProcessReadWriteLock.readLock().acquire', (o) => new InterProcessReadWriteLock(client, `${scratch}/rw`).readLock().acquire(o as never)],
      ['InterProcessSemaphoreV2.acquire', (o) => new InterProcessSemaphoreV2(client, `${scratch}/s`, { maxLeases: 1 }).acquire(o as never)],
      ['LeaderLatch.await', (o) => keep(new LeaderLatch(client, `${scratch}/l`)).await(o as never)],
      ['DistributedQueue.put', (o) => keep(new DistributedQueue<number>(client, `${scratch}/q`)).put(1, o as never)],
      ['SimpleDistributedQueue.take', (o) => new SimpleDistributedQueue(client, `${scratch}/sq`).take(o as never)],
    ];
    it.each(optionOps)('%s rejects a non-object options argument with InvalidArgumentError', async (name, op) => {
      await fc.assert(
        fc.asyncProperty(badOptions, async (options) => {
          const outcome = await outcomeOf(() => op(options));
          await undo(outcome);
          expectRejection(`${name}(${show(options)})`, outcome, InvalidArgumentError);
        }),
        { numRuns: RUNS },
      );
    });

    const fieldOps: ReadonlyArray<[string, fc.Arbitrary<unknown>, (bad: unknown) => unknown]> = [
      ['ZkClient.create mode', fc.oneof(wrongType, fc.string({ maxLength: 8 })), (v) => client.create(`${scratch}/f`, { mode: v as never })],
      ['ZkClient.create data', fc.oneof(fc.integer(), fc.boolean(), fc.object(), fc.constant(Symbol('d'))), (v) => client.create(`${scratch}/f`, { data: v as never })],
      ['ZkClient.delete version', fc.oneof(fc.double({ noInteger: true }), fc.integer({ max: -2 }), fc.constant('1')), (v) => client.delete(`${scratch}/f`, { version: v as never })],
      ['ZkClient.getData watcher', fc.oneof(fc.integer(), fc.string(), fc.object()), (v) => client.getData(`${scratch}/f`, { watcher: v as never })],
      ['ZkClient.exists signal', fc.oneof(fc.integer(), fc.object(), fc.constant({ aborted: true })), (v) => client.exists(`${scratch}/f`, { signal: v as never })],
      ['InterProcessMutex.acquire signal', fc.oneof(fc.integer(), fc.object(), fc.constant({ aborted: false })), (v) => new InterProcessMutex(client, `${scratch}/m`).acquire({ signal: v as never })],
      ['InterProcessMutex.runExclusive callback', fc.oneof(fc.integer(), fc.string(), fc.constant(null)), (v) => new InterProcessMutex(client, `${scratch}/m`).runExclusive(v as never)],
      ['InterProcessSemaphoreV2.acquire qty', fc.oneof(fc.integer({ max: 0 }), fc.double({ noInteger: true }), fc.constant('2')), (v) => new InterProcessSemaphoreV2(client, `${scratch}/s`, { maxLeases: 1 }).acquire({ qty: v as never })],
    ];
    it.each(fieldOps)('%s of the wrong type is refused with InvalidArgumentError', async (name, arbitrary, op) => {
      await fc.assert(
        fc.asyncProperty(arbitrary, async (bad) => {
          const outcome = await outcomeOf(() => op(bad));
          await undo(outcome);
          expectRejection(`${name} = ${show(bad)}`, outcome, InvalidArgumentError);
        }),
        { numRuns: RUNS },
      );
    });
  });

  describe('timeouts', () => {
    // `blocked`: the wait cannot end by itself (the lock is held, the latch led, the queue empty).
    const timed: ReadonlyArray<[string, (timeoutMs: unknown, signal: AbortSignal) => unknown, boolean]> = [
      ['ZkClient.blockUntilConnected', (t, signal) => client.blockUntilConnected({ timeoutMs: t as number, signal }), false],
      ['InterProcessMutex.acquire', (t, signal) => new InterProcessMutex(client, `${root}/held`).acquire({ timeoutMs: t as number, signal }), true],
      ['InterProcessMutex.runExclusive', (t, signal) => new InterProcessMutex(client, `${root}/held`).runExclusive(() => undefined, { timeoutMs: t as number, signal }), true],
      ['InterProcessReadWriteLock.writeLock().acquire', (t, signal) => new InterProcessReadWriteLock(client, `${scratch}/rw-t`).writeLock().acquire({ timeoutMs: t as number, signal }), false],
      ['InterProcessSemaphoreMutex.acquire', (t, signal) => new InterProcessSemaphoreMutex(client, `${scratch}/sm-t`).acquire({ timeoutMs: t as number, signal }), false],
      ['LeaderLatch.await', (t, signal) => {
        const latch = keep(new LeaderLatch(client, `${root}/led`));
        latch.start();
        return latch.await({ timeoutMs: t as number, signal });
      }, true],
      ['SimpleDistributedQueue.take', (t, signal) => new SimpleDistributedQueue(client, `${scratch}/empty-q`).take({ timeoutMs: t as number, signal }), true],
    ];

    it.each(timed)('%s rejects a negative, NaN or non-number timeout with InvalidArgumentError', async (name, op) => {
      await fc.assert(
        fc.asyncProperty(badTimeout, async (timeoutMs) => {
          const controller = new AbortController();
          const outcome = await outcomeOf(() => op(timeoutMs, controller.signal));
          controller.abort();
          await undo(outcome);
          expectRejection(`${name}({ timeoutMs: ${show(timeoutMs)} })`, outcome, InvalidArgumentError);
        }),
        { numRuns: RUNS },
      );
    });

    // Where the wait cannot end by itself (the lock is held, the latch led, the queue empty), a
    // huge timeout must not end it early: it means no limit, or it is refused.
    it.each(timed.filter(([, , blocked]) => blocked))('%s takes a timeout beyond 2^31-1 ms as no limit, or refuses it', async (name, op) => {
      await fc.assert(
        fc.asyncProperty(hugeTimeout, async (timeoutMs) => {
          const controller = new AbortController();
          const outcome = await outcomeOf(() => op(timeoutMs, controller.signal), timing(300));
          if (outcome.how === 'pending') {
            const reason = new Error('enough');
            controller.abort(reason);
            const settled = await outcomeOf(() => outcome.value);
            await undo(settled);
            if (settled.how !== 'rejected' || settled.value !== reason) throw new Error(`${name}: after the abort it ${settled.how} instead of rejecting with the signal's reason`);
            return;
          }
          await undo(outcome);
          expectRejection(`${name}({ timeoutMs: ${timeoutMs} }) (it ended the wait at once)`, outcome, InvalidArgumentError);
        }),
        { numRuns: 3 },
      );
    });
  });

  describe('already-aborted signals', () => {
    const reason = fc.oneof(fc.constant(undefined), fc.string({ maxLength: 8 }).map((m) => new ZkError('ILLEGAL_STATE', `stop ${m}`)));
    const signalled: ReadonlyArray<[string, (path: string, signal: AbortSignal) => unknown]> = [
      ['ZkClient.create', (p, signal) => client.create(p, { signal, createParents: 'persistent' })],
      ['ZkClient.createAndListParent', (p, signal) => client.createAndListParent(p, { signal, mode: 'EPHEMERAL', createParents: 'container' })],
      ['ZkClient.ensurePath', (p, signal) => client.ensurePath(p, { signal })],
      ['ZkClient.exists', (p, signal) => client.exists(p, { signal })],
      ['ZkClient.getData', (p, signal) => client.getData(p, { signal })],
      ['ZkClient.setData', (p, signal) => client.setData(p, 'x', { signal })],
      ['ZkClient.delete', (p, signal) => client.delete(p, { signal })],
      ['ZkClient.sync', (p, signal) => client.sync(p, { signal })],
      ['ZkClient.blockUntilConnected', (_p, signal) => client.blockUntilConnected({ signal })],
      ['InterProcessMutex.acquire', (p, signal) => new InterProcessMutex(client, p).acquire({ signal })],
      ['InterProcessMutex.runExclusive', (p, signal) => new InterProcessMutex(client, p).runExclusive(() => {
        throw new Error('the callback ran under an aborted signal');
      }, { signal })],
      ['InterProcessReadWriteLock.readLock().acquire', (p, signal) => new InterProcessReadWriteLock(client, p).readLock().acquire({ signal })],
      ['InterProcessSemaphoreV2.acquire', (p, signal) => new InterProcessSemaphoreV2(client, p, { maxLeases: 3 }).acquire({ signal })],
      ['LeaderLatch.await', (p, signal) => {
        const latch = keep(new LeaderLatch(client, p));
        return latch.await({ signal });
      }],
      ['DistributedQueue.put', (p, signal) => keep(new DistributedQueue<number>(client, p)).put(1, { signal })],
      ['SimpleDistributedQueue.take', (p, signal) => new SimpleDistributedQueue(client, p).take({ signal })],
      ['observeLeader', (p, signal) => observeLeader(client, p, { signal }).next()],
    ];
    it.each(signalled)('%s rejects with the signal\'s reason and does nothing', async (name, op) => {
      await fc.assert(
        fc.asyncProperty(validPath, reason, async (path, why) => {
          const signal = AbortSignal.abort(why);
          const outcome = await outcomeOf(() => op(path, signal));
          await undo(outcome);
          if (outcome.how === 'threw') throw new Error(`${name} threw synchronously instead of rejecting`);
          if (outcome.how !== 'rejected' || outcome.value !== signal.reason) {
            throw new Error(`${name} under an aborted signal ${outcome.how} with ${show(outcome.value)} instead of the signal's reason`);
          }
        }),
        { numRuns: 10 },
      );
    });
  });

  describe('calls after close', () => {
    it.each(clientOps)('ZkClient.%s on a closed client rejects with ClientClosedError', async (name, op) => {
      await fc.assert(
        fc.asyncProperty(validPath, async (path) => {
          expectRejection(`ZkClient.${name} after close`, await outcomeOf(() => op(closed, path)), ClientClosedError);
        }),
        { numRuns: 5 },
      );
    });

    it.each(recipes.filter((r) => !r.constructorOnly).map((r) => [r.name, r] as const))('%s on a closed client rejects with ClientClosedError', async (_name, entry) => {
      await fc.assert(
        fc.asyncProperty(validPath, async (path) => {
          await expectRecipeRefuses(entry, closed, path, ClientClosedError);
        }),
        { numRuns: 5 },
      );
    });

    it('LeaderLatch and LeaderSelector refuse to start on a closed client with a ZkError', async () => {
      for (const participant of [new LeaderLatch(closed, `${scratch}/l`), new LeaderSelector(closed, `${scratch}/s`, { takeLeadership: () => undefined })]) {
        keep(participant);
        const outcome = await outcomeOf(() => participant.start());
        expectThrow(`${participant.constructor.name}.start() after close`, outcome, ZkError);
      }
    });

    it('closing the client aborts the signal of every lease it held', async () => {
      const own = await clients.connect({ connectString: server.connectString });
      const mutexLease = await new InterProcessMutex(own, `${scratch}/close-m`).acquire({ timeoutMs: timing(5_000) });
      const [semaphoreLease] = await new InterProcessSemaphoreV2(own, `${scratch}/close-s`, { maxLeases: 2 }).acquire({ timeoutMs: timing(5_000) });
      expect([mutexLease.signal.aborted, semaphoreLease.signal.aborted]).toEqual([false, false]);
      await own.close();
      await eventually('both lease signals abort after close()', () => mutexLease.signal.aborted && semaphoreLease.signal.aborted, timing(2_000));
      for (const lease of [mutexLease, semaphoreLease]) {
        const released = await outcomeOf(() => lease.release());
        if (released.how === 'threw' || (released.how === 'rejected' && !(released.value instanceof ZkError))) {
          throw new Error(`release() after close ${released.how} with ${String(released.value)}`);
        }
      }
    });
  });

  it('leaves no node behind, and the client still works', async () => {
    await eventually(
      'no node under the scratch path',
      async () => {
        const left = await childrenOf(client, scratch);
        return left.length === 0 ? true : undefined;
      },
      timing(3_000),
    );
    const reserved = await client.getChildren('/zookeeper');
    expect(reserved.sort()).toEqual(['config', 'quota']);
    expect(client.isConnected).toBe(true);
    expect(await client.exists(`${root}/held`)).not.toBeNull();
  });
});
