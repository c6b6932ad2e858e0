/**
 * zk-recipes in this process, one ZkClient per session: InterProcessMutex (scenarios 1–3),
 * InterProcessReadWriteLock (rwlock), LeaderLatch (leader), DistributedQueue (queue), CuratorCache
 * (cache) and ServiceDiscovery with its ServiceProvider (discovery). One peer
 * per transport: 'zk-recipes' on the protocol transport, 'zk-recipes-native' on the binding.
 */
import { ZkClient } from '../../src';
import type { TransportName } from '../../src/client/chooseTransport';
import { LeaderLatch } from '../../recipes/leader';
import { InterProcessMutex, InterProcessReadWriteLock } from '../../recipes/locks';
import { DistributedQueue } from '../../recipes/queue';
import { CuratorCache } from '../../recipes/cache';
import { ServiceDiscovery, createServiceInstance, type ServiceProvider } from '../../recipes/discovery';
import { HoldCounter, RwHoldCounter, clockUs } from './clock';
import { queueHandoff, type QueuedHandoff } from './handoffQueue';
import { XorShift32, sessionSeed } from './rng';
import { itemsPerProducer, connectStringOf, type CacheEventsRun, type CacheLoad, type ContendedRun, type DiscoveryPicks, type DiscoveryWarm, type HandoffRun, type LeaderFailover, type LockPeer, type QueueRun, type RwLockRun, type Spread } from './types';

/** A queue run that has consumed nothing for this long gives up (items were lost). */
export const QUEUE_STALL_MS = 10_000;
/** After the last item, how long consumers keep listening for a duplicate. */
export const QUEUE_GRACE_MS = 100;
/** How long a registration or a provider's first load may take. */
const DISCOVERY_TIMEOUT_MS = 60_000;
/** Picks between two readings of the clock in the pick loop. */
const PICK_BATCH = 256;
/** How long leader.start and leader.failover wait for a leader. */
const LEADER_TIMEOUT_MS = 30_000;

interface Participant {
  latch: LeaderLatch;
  closing: boolean;
}

interface Election {
  path: string;
  /** Per session: its participant, if it has one. */
  parts: Array<Participant | undefined>;
  elections: number;
  violations: number;
  onLeader: ((atUs: number) => void) | undefined;
}

interface QueueState {
  producers: Array<DistributedQueue<string>>;
  consumers: Array<DistributedQueue<string>>;
  /** Items per producer. */
  perProducer: number[];
  items: number;
  received: Array<Array<[number, number]>>;
  consumed: number;
  lastConsumedUs: number;
  /** When the items-th item was consumed. */
  doneUs: number | undefined;
  /** Wakes queueRun's wait. */
  wake: (() => void) | undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `condition` every few ms until it holds; throws `what` after `timeoutMs`. */
async function until(condition: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(what());
    await sleep(2);
  }
}

export class ZkRecipesPeer implements LockPeer {
  readonly id: 'zk-recipes' | 'zk-recipes-native';
  readonly usesZooKeeper = true;
  private clients: ZkClient[] = [];
  private readonly uncontendedMutexes = new Map<string, InterProcessMutex>();
  private queued: QueuedHandoff | undefined;
  private election: Election | undefined;
  private queue: QueueState | undefined;
  /** The discovery that registered instances, and the one whose provider picks. */
  private discoveries: { registrar?: ServiceDiscovery; reader?: ServiceDiscovery; provider?: ServiceProvider } = {};
  private cache: { cache: CuratorCache; expected: number; events: number; startUs: number; lastUs: number; wake: (() => void) | undefined } | undefined;

  constructor(
    /** Session i connects to `connectStringOf(spread, i)`. */
    private readonly spread: Spread,
    private readonly sessionTimeoutMs: number,
    readonly versions: Record<string, string>,
    /** For tables: "zk-recipes 0.1.0". */
    readonly label = 'zk-recipes',
    readonly transport: TransportName = 'protocol',
  ) {
    this.id = transport === 'native' ? 'zk-recipes-native' : 'zk-recipes';
  }

  async open(sessions: number): Promise<void> {
    await this.closeSessions();
    for (let i = 0; i < sessions; i++) {
      const client = new ZkClient({ connectString: connectStringOf(this.spread, i), sessionTimeoutMs: this.sessionTimeoutMs, transport: this.transport });
      this.clients.push(client);
      client.start();
    }
    for (const client of this.clients) {
      await client.blockUntilConnected({ timeoutMs: 30_000 });
    }
  }

  async closeSessions(): Promise<void> {
    await this.cacheStop().catch(() => undefined);
    await this.discoveryStop().catch(() => undefined);
    await this.leaderStop().catch(() => undefined);
    await this.stopQueue().catch(() => undefined);
    const clients = this.clients;
    this.clients = [];
    this.uncontendedMutexes.clear();
    this.queued = undefined;
    await Promise.all(clients.map((c) => c.close()));
  }

  private session(i: number): ZkClient {
    if (this.clients.length === 0) throw new Error('no sessions are open');
    return this.clients[i % this.clients.length];
  }

  async uncontended(path: string, iterations: number): Promise<number[]> {
    let mutex = this.uncontendedMutexes.get(path);
    if (!mutex) this.uncontendedMutexes.set(path, (mutex = new InterProcessMutex(this.session(0), path)));
    const lat: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = clockUs();
      const lease = await mutex.acquire();
      await lease.release();
      lat.push(clockUs() - t0);
    }
    return lat;
  }

  async contended(path: string, durationMs: number): Promise<ContendedRun> {
    const n = this.clients.length;
    if (n === 0) throw new Error('no sessions are open');
    const counter = new HoldCounter();
    const counts = new Array<number>(n).fill(0);
    const holds: Array<[number, number]> = [];
    const t0 = clockUs();
    const deadline = t0 + durationMs * 1000;
    await Promise.all(
      this.clients.map(async (client, k) => {
        const mutex = new InterProcessMutex(client, path);
        while (clockUs() < deadline) {
          const lease = await mutex.acquire();
          counter.enter();
          const start = clockUs();
          const end = clockUs();
          counter.leave();
          await lease.release();
          holds.push([start, end]);
          counts[k]++;
        }
      }),
    );
    return { counts, elapsedMs: (clockUs() - t0) / 1000, violations: counter.violations, holds };
  }

  async handoffQueue(path: string, waiters: number, holdMs: number): Promise<void> {
    if (this.queued) throw new Error('a hand-off is already queued');
    this.queued = await queueHandoff(waiters, holdMs, async (k) => {
      const lease = await new InterProcessMutex(this.session(k === 0 ? 0 : k - 1), path).acquire();
      return () => lease.release();
    });
  }

  async handoffRun(): Promise<HandoffRun> {
    const q = this.queued;
    if (!q) throw new Error('no hand-off is queued');
    this.queued = undefined;
    return q.run();
  }

  async rwlock(path: string, durationMs: number, writePercent: number): Promise<RwLockRun> {
    const n = this.clients.length;
    if (n === 0) throw new Error('no sessions are open');
    const counter = new RwHoldCounter();
    const reads = new Array<number>(n).fill(0);
    const writes = new Array<number>(n).fill(0);
    const holds: Array<[number, number, number]> = [];
    const t0 = clockUs();
    const deadline = t0 + durationMs * 1000;
    await Promise.all(
      this.clients.map(async (client, k) => {
        const rw = new InterProcessReadWriteLock(client, path);
        const readLock = rw.readLock();
        const writeLock = rw.writeLock();
        const rng = new XorShift32(sessionSeed(k));
        while (clockUs() < deadline) {
          const write = rng.writes(writePercent);
          const lease = await (write ? writeLock : readLock).acquire();
          counter.enter(write);
          const start = clockUs();
          const end = clockUs();
          counter.leave(write);
          await lease.release();
          holds.push([start, end, write ? 1 : 0]);
          if (write) writes[k]++;
          else reads[k]++;
        }
      }),
    );
    return { reads, writes, elapsedMs: (clockUs() - t0) / 1000, violations: counter.violations, maxReaders: counter.maxReaders, holds };
  }

  async leaderStart(path: string): Promise<void> {
    if (this.clients.length === 0) throw new Error('no sessions are open');
    if (this.election && this.election.path !== path) await this.leaderStop();
    const e: Election = (this.election ??= { path, parts: new Array<Participant | undefined>(this.clients.length).fill(undefined), elections: 0, violations: 0, onLeader: undefined });
    this.clients.forEach((client, i) => {
      if (e.parts[i]) return;
      const latch = new LeaderLatch(client, path, { id: `participant-${i}` });
      const p: Participant = { latch, closing: false };
      latch.on('isLeader', () => {
        const atUs = clockUs();
        e.elections++;
        if (e.parts.some((o) => o !== undefined && o !== p && !o.closing && o.latch.hasLeadership)) e.violations++;
        e.onLeader?.(atUs);
      });
      e.parts[i] = p;
      latch.start();
    });
    const parts = () => e.parts.filter((p): p is Participant => p !== undefined);
    await until(
      () => parts().every((p) => p.latch.ourPath !== undefined) && parts().filter((p) => p.latch.hasLeadership).length === 1,
      LEADER_TIMEOUT_MS,
      () => `no single leader with every participant in the race after ${LEADER_TIMEOUT_MS} ms (${parts().filter((p) => p.latch.hasLeadership).length} leading)`,
    );
  }

  async leaderFailover(): Promise<LeaderFailover> {
    const e = this.election;
    if (!e) throw new Error('no election is running');
    const at = e.parts.findIndex((p) => p?.latch.hasLeadership);
    const old = e.parts[at];
    if (!old) throw new Error('nobody leads');
    e.elections = 0;
    e.violations = 0;
    let timer: NodeJS.Timeout | undefined;
    const next = new Promise<number>((resolve, reject) => {
      e.onLeader = resolve;
      timer = setTimeout(() => reject(new Error(`no new leader within ${LEADER_TIMEOUT_MS} ms`)), LEADER_TIMEOUT_MS);
    });
    old.closing = true;
    const t0 = clockUs();
    const closed = old.latch.close();
    try {
      const t1 = await next;
      await closed;
      const leaders = e.parts.filter((p) => p?.latch.hasLeadership).length;
      return { failoverUs: t1 - t0, leaders, elections: e.elections, violations: e.violations };
    } finally {
      clearTimeout(timer);
      e.onLeader = undefined;
      e.parts[at] = undefined;
      await closed.catch(() => undefined);
    }
  }

  async leaderStop(): Promise<void> {
    const e = this.election;
    this.election = undefined;
    if (!e) return;
    await Promise.all(e.parts.map((p) => p?.latch.close()));
  }

  async queuePrepare(path: string, producers: number, consumers: number, items: number): Promise<void> {
    if (this.queue) throw new Error('a queue run is already prepared');
    if (this.clients.length < producers + consumers) throw new Error(`${producers} producers and ${consumers} consumers need ${producers + consumers} sessions, ${this.clients.length} are open`);
    const q: QueueState = {
      producers: [],
      consumers: [],
      perProducer: itemsPerProducer(items, producers),
      items,
      received: Array.from({ length: consumers }, () => []),
      consumed: 0,
      lastConsumedUs: 0,
      doneUs: undefined,
      wake: undefined,
    };
    this.queue = q;
    for (let k = 0; k < producers; k++) q.producers.push(new DistributedQueue<string>(this.clients[k], path));
    for (let j = 0; j < consumers; j++) {
      const consumer = new DistributedQueue<string>(this.clients[producers + j], path);
      q.consumers.push(consumer);
      const mine = q.received[j];
      consumer.start((item) => {
        const colon = item.indexOf(':');
        mine.push([Number(item.slice(0, colon)), Number(item.slice(colon + 1))]);
        q.lastConsumedUs = clockUs();
        if (++q.consumed === q.items) {
          q.doneUs = q.lastConsumedUs;
          q.wake?.();
        }
      });
    }
  }

  async queueRun(): Promise<QueueRun> {
    const q = this.queue;
    if (!q) throw new Error('no queue run is prepared');
    try {
      const t0 = clockUs();
      await Promise.all(
        q.producers.map(async (producer, k) => {
          for (let s = 0; s < q.perProducer[k]; s++) await producer.put(`${k}:${s}`);
        }),
      );
      // Every item is in; wait for the last to be consumed, or for consumption to stall.
      while (q.doneUs === undefined) {
        const before = q.consumed;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, QUEUE_STALL_MS);
          q.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        q.wake = undefined;
        if (q.doneUs === undefined && q.consumed === before) break;
      }
      await sleep(QUEUE_GRACE_MS);
      const endUs = q.doneUs ?? q.lastConsumedUs;
      return { elapsedMs: (endUs - t0) / 1000, received: q.received.map((r) => [...r]) };
    } finally {
      await this.stopQueue();
    }
  }

  private async stopQueue(): Promise<void> {
    const q = this.queue;
    this.queue = undefined;
    if (!q) return;
    await Promise.all([...q.consumers, ...q.producers].map((x) => x.close()));
  }

  async cacheLoad(path: string): Promise<CacheLoad> {
    await this.cacheStop();
    const t0 = clockUs();
    const cache = new CuratorCache(this.session(0), path);
    const state = { cache, expected: 0, events: 0, startUs: 0, lastUs: 0, wake: undefined as (() => void) | undefined };
    cache.on('changed', () => {
      state.events++;
      state.lastUs = clockUs();
      if (state.expected > 0 && state.events >= state.expected) state.wake?.();
    });
    this.cache = state;
    cache.start();
    await cache.waitForInitialized({ timeoutMs: 600_000 });
    return { elapsedMs: (clockUs() - t0) / 1000, nodes: cache.size };
  }

  async cacheExpect(changes: number): Promise<void> {
    const state = this.cache;
    if (!state) throw new Error('no cache is loaded');
    state.expected = changes;
    state.events = 0;
    state.startUs = clockUs();
  }

  async cacheAwait(timeoutMs: number): Promise<CacheEventsRun> {
    const state = this.cache;
    if (!state) throw new Error('no cache is loaded');
    if (state.events < state.expected) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        state.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      state.wake = undefined;
    }
    return { elapsedMs: (state.lastUs - state.startUs) / 1000, events: state.events };
  }

  async cacheStop(): Promise<void> {
    const state = this.cache;
    this.cache = undefined;
    await state?.cache.close();
  }

  async discoveryRegister(basePath: string, name: string, count: number): Promise<number[]> {
    await this.discoveries.registrar?.close();
    const discovery = new ServiceDiscovery(this.session(0), basePath);
    this.discoveries.registrar = discovery;
    await discovery.start();
    const lat: number[] = [];
    for (let k = 0; k < count; k++) {
      const instance = createServiceInstance({ name, address: '127.0.0.1', port: 8080, uriSpec: '{scheme}://{address}:{port}', payload: { index: k } });
      const t0 = clockUs();
      await discovery.registerService(instance, { timeoutMs: DISCOVERY_TIMEOUT_MS });
      lat.push(clockUs() - t0);
    }
    return lat;
  }

  async discoveryWarm(basePath: string, name: string): Promise<DiscoveryWarm> {
    await this.discoveries.reader?.close();
    const discovery = new ServiceDiscovery(this.session(0), basePath);
    this.discoveries.reader = discovery;
    await discovery.start();
    const provider = discovery.serviceProvider(name);
    const t0 = clockUs();
    await provider.start({ timeoutMs: DISCOVERY_TIMEOUT_MS });
    const elapsedMs = (clockUs() - t0) / 1000;
    this.discoveries.provider = provider;
    return { elapsedMs, instances: provider.getAllInstances().length };
  }

  async discoveryPick(durationMs: number, check: number): Promise<DiscoveryPicks> {
    const provider = this.discoveries.provider;
    if (!provider) throw new Error('no provider is warmed');
    let picks = 0;
    let nulls = 0;
    const t0 = clockUs();
    const end = t0 + durationMs * 1000;
    let now = t0;
    while (now < end) {
      for (let i = 0; i < PICK_BATCH; i++) if (provider.getInstance() === null) nulls++;
      picks += PICK_BATCH;
      now = clockUs();
    }
    const ids = new Set<string>();
    for (let i = 0; i < check; i++) {
      const instance = provider.getInstance();
      if (instance === null) nulls++;
      else ids.add(instance.id);
    }
    return { picks, elapsedMs: (now - t0) / 1000, nulls, ids: [...ids] };
  }

  async discoveryStop(): Promise<void> {
    const { registrar, reader } = this.discoveries;
    this.discoveries = {};
    // Closing a discovery closes its provider.
    await Promise.all([registrar?.close(), reader?.close()]);
  }

  async shutdown(): Promise<void> {
    await this.closeSessions();
  }
}
