/**
 * What a demo worker does with each command: the recipes at work, reporting each step as an
 * event. One function per command; `worker.ts` feeds them.
 */
import { LeaderLatch } from '../recipes/leader';
import { InterProcessMutex, InterProcessReadWriteLock, type Lease } from '../recipes/locks';
import { DistributedQueue } from '../recipes/queue';
import { isZkError, type ZkClient } from '../src';
import { sleep } from '../src/util/async';
import { now, type Command, type WorkerEvent } from './protocol';

/** How long any one acquire may wait before the demo calls it a failure. */
const ACQUIRE_TIMEOUT_MS = 60_000;

type Emit = (event: WorkerEvent) => void;
type CommandOf<K extends Command['op']> = Extract<Command, { op: K }>;

/** The recipes one worker holds, so that `close` can close them. */
export class WorkerTasks {
  private rwLease: Lease | undefined;
  private readonly rwLocks = new Map<string, InterProcessReadWriteLock>();
  private readonly closers: Array<() => Promise<void>> = [];
  private consumer: DistributedQueue<string> | undefined;

  constructor(
    private readonly client: ZkClient,
    private readonly name: string,
    private readonly emit: Emit,
  ) {}

  /**
   * Takes and releases a mutex, `rounds` times. While it holds, it creates an EPHEMERAL guard node:
   * if another holder's guard is there, two holds overlapped, and it says so.
   */
  async mutex(cmd: CommandOf<'mutex'>): Promise<void> {
    const mutex = new InterProcessMutex(this.client, cmd.path, { data: this.name });
    for (let round = 0; round < cmd.rounds; round++) {
      this.emit({ event: 'asked', at: now() });
      const lease = await mutex.acquire({ timeoutMs: ACQUIRE_TIMEOUT_MS });
      this.emit({ event: 'granted', at: now(), node: lease.node, token: lease.fencingToken.toString() });
      try {
        const guarded = await this.takeGuard(cmd.guardPath);
        await sleep(cmd.holdMs, lease.signal).catch(() => undefined);
        if (guarded) await this.dropGuard(cmd.guardPath);
      } finally {
        // Said before the release, so the reported hold lies within the real one.
        this.emit({ event: 'released', at: now() });
        await lease.release();
      }
      await sleep(Math.random() * cmd.thinkMs);
    }
    this.emit({ event: 'mutexDone', at: now() });
  }

  private async takeGuard(guardPath: string): Promise<boolean> {
    try {
      await this.client.create(guardPath, { mode: 'EPHEMERAL', data: this.name, createParents: 'container' });
      return true;
    } catch (err) {
      if (!isZkError(err, 'NODEEXISTS')) throw err;
      this.emit({ event: 'overlap', at: now(), guard: guardPath });
      return false;
    }
  }

  /** Deletes the guard only if it is still ours: after a lost session it may be the next holder's. */
  private async dropGuard(guardPath: string): Promise<void> {
    const stat = await this.client.exists(guardPath);
    if (stat !== null && stat.ephemeralOwner === this.client.sessionId) await this.client.delete(guardPath, { version: stat.version, quietly: true });
  }

  /** Asks for the read or write lock and reports when it is held. */
  async rwAcquire(cmd: CommandOf<'rw.acquire'>): Promise<void> {
    let rw = this.rwLocks.get(cmd.path);
    if (!rw) this.rwLocks.set(cmd.path, (rw = new InterProcessReadWriteLock(this.client, cmd.path, { data: this.name })));
    this.emit({ event: 'asked', at: now(), mode: cmd.mode });
    const lock = cmd.mode === 'read' ? rw.readLock() : rw.writeLock();
    const lease = await lock.acquire({ timeoutMs: ACQUIRE_TIMEOUT_MS });
    this.rwLease = lease;
    this.emit({ event: 'granted', at: now(), node: lease.node, token: lease.fencingToken.toString(), mode: cmd.mode });
  }

  async rwRelease(): Promise<void> {
    const lease = this.rwLease;
    this.rwLease = undefined;
    this.emit({ event: 'released', at: now() });
    await lease?.release();
  }

  /** Joins an election; reports each leadership gained and lost. */
  latch(cmd: CommandOf<'latch'>): void {
    // notifyLeader: a latch closed while leading says so, so the demo knows when the leadership ended.
    const latch = new LeaderLatch(this.client, cmd.path, { id: cmd.id, closeMode: 'notifyLeader' });
    latch.on('isLeader', () => this.emit({ event: 'isLeader', at: now() }));
    latch.on('notLeader', () => this.emit({ event: 'notLeader', at: now() }));
    this.closers.push(() => latch.close());
    latch.start();
  }

  /** Puts `count` items, named after this worker, one every `intervalMs`. */
  async produce(cmd: CommandOf<'produce'>): Promise<void> {
    const queue = new DistributedQueue<string>(this.client, cmd.path);
    for (let i = 1; i <= cmd.count; i++) {
      const item = `${this.name}#${String(i).padStart(3, '0')}`;
      await queue.put(item);
      this.emit({ event: 'put', at: now(), item });
      if (i < cmd.count) await sleep(cmd.intervalMs);
    }
    await queue.close();
    this.emit({ event: 'produced', at: now() });
  }

  /** Consumes in lock-safe mode: an item is deleted only after it was handled (at least once). */
  consume(cmd: CommandOf<'consume'>): void {
    const queue = new DistributedQueue<string>(this.client, cmd.path, { lockPath: cmd.lockPath });
    this.consumer = queue;
    queue.start(async (item, { signal }) => {
      await sleep(cmd.workMs, signal);
      this.emit({ event: 'delivered', at: now(), item });
    });
  }

  async stopConsuming(): Promise<void> {
    await this.consumer?.close();
    this.consumer = undefined;
    this.emit({ event: 'consumerStopped', at: now() });
  }

  /** Closes every recipe this worker runs. */
  async close(): Promise<void> {
    await this.rwLease?.release().catch(() => undefined);
    await this.consumer?.close().catch(() => undefined);
    for (const close of this.closers.splice(0)) await close().catch(() => undefined);
  }
}
