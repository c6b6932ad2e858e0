/**
 * The nemesis of a chaos run: a schedule of faults drawn from the run's seed, and the executor that
 * injects them one at a time, each after a quiet gap, recording when each starts and ends.
 *
 * One fault at a time, as etcd's robustness tests do, so that the figures before, during and after
 * each fault tell what that fault did. The seed fixes the kinds, targets and durations; which server
 * leads when a "kill the leader" comes is up to the ensemble, and is recorded.
 */
import type { FaultProxy, TestingCluster } from '../src/testing';
import { loseReplyToCreate, type LostReply } from './frames';
import { now, type FaultEvent, type HistoryEvent, type HoldKind } from './history';
import { runHelper, type ChildLines } from './processes';
import { Random, deriveSeed } from './random';

export type FaultKind =
  | 'kill-leader'
  | 'kill-follower'
  | 'pause-server'
  | 'cut-worker'
  | 'blackhole-worker'
  | 'lost-reply'
  | 'expire-session'
  | 'pause-worker'
  | 'burst';

export const FAULT_KINDS: readonly FaultKind[] = Object.freeze([
  'kill-leader',
  'kill-follower',
  'pause-server',
  'cut-worker',
  'blackhole-worker',
  'lost-reply',
  'expire-session',
  'pause-worker',
  'burst',
]);

/** One fault of the schedule. */
export interface ScheduledFault {
  readonly id: number;
  readonly kind: FaultKind;
  /** Quiet time before it: the second half is its "before" phase, the first half the previous fault's "after". */
  readonly gapMs: number;
  /** How long it lasts (a pause, a partition, a server down); the longest wait for a lost reply. */
  readonly durationMs: number;
  /** The worker it targets, for worker faults. */
  readonly worker?: number;
  /** A draw that picks a server among the candidates when the fault comes. */
  readonly pick: number;
  /** pause-worker: catch the worker between the read and the write of a guarded increment, rather than at a random moment. */
  readonly inHold?: boolean;
  /**
   * Worker faults: aim at the worker that leads the latch or the selector when the fault comes
   * (the one whose stale leadership would do harm), or at the scheduled worker.
   */
  readonly aim?: 'latch' | 'selector' | 'worker';
}

export interface ScheduleOptions {
  readonly durationMs: number;
  readonly sessionTimeoutMs: number;
  readonly workers: number;
  readonly kinds: readonly FaultKind[];
  /** Shorter gaps, and the fault that exercises fencing (a worker paused past its session) first. */
  readonly quick: boolean;
}

/** The schedule a seed gives: kinds in shuffled rounds, so that every kind comes up as often. */
export function makeSchedule(seed: number, o: ScheduleOptions): ScheduledFault[] {
  const rng = new Random(deriveSeed(seed, 0));
  const t = o.sessionTimeoutMs;
  const faults: ScheduledFault[] = [];
  let round: FaultKind[] = [];
  let elapsed = 0;
  for (let id = 1; ; id++) {
    if (round.length === 0) {
      round = rng.shuffle(o.kinds);
      if (o.quick && id === 1 && round.includes('pause-worker')) round = ['pause-worker', ...round.filter((k) => k !== 'pause-worker')];
    }
    const kind = round.shift() as FaultKind;
    const gapMs = o.quick ? rng.int(t, Math.round(1.5 * t)) : rng.int(2 * t, 3 * t);
    const durationMs = duration(kind, t, rng);
    if (elapsed + gapMs + durationMs > o.durationMs) break;
    elapsed += gapMs + durationMs;
    const targetsWorker = kind.endsWith('-worker') || kind === 'lost-reply' || kind === 'expire-session';
    const worker = targetsWorker ? rng.int(0, o.workers - 1) : undefined;
    const pick = rng.int(0, 1_000_000);
    // Quick runs always exercise fencing: their first pause comes in the middle of a hold.
    const inHold = kind === 'pause-worker' ? (o.quick && id === 1) || rng.chance(0.5) : undefined;
    const aim = worker !== undefined && !inHold && kind !== 'lost-reply' ? rng.pick(['latch', 'selector', 'worker'] as const) : undefined;
    faults.push({
      id,
      kind,
      gapMs,
      durationMs,
      ...(worker !== undefined ? { worker } : {}),
      pick,
      ...(inHold !== undefined ? { inHold } : {}),
      ...(aim !== undefined ? { aim } : {}),
    });
  }
  return faults;
}

function duration(kind: FaultKind, t: number, rng: Random): number {
  switch (kind) {
    case 'kill-leader':
      return rng.int(1_000, Math.round(1.5 * t));
    case 'kill-follower':
      return rng.int(1_000, 2 * t);
    case 'pause-server':
      return rng.int(1_000, Math.round(1.5 * t));
    case 'cut-worker':
      return rng.int(500, 2 * t);
    case 'blackhole-worker':
      return rng.int(Math.round(t / 2), 2 * t);
    case 'lost-reply':
      return 5_000;
    case 'expire-session':
      return 0;
    case 'pause-worker':
      // Longer than the session timeout: the session expires while the worker is frozen.
      return rng.int(Math.round(1.25 * t), 2 * t);
    case 'burst':
      return rng.int(3_000, 6_000);
  }
}

/** What the nemesis acts on. */
export interface NemesisTargets {
  readonly cluster: TestingCluster;
  readonly proxies: readonly FaultProxy[];
  readonly workers: readonly ChildLines[];
  /** The run's root path: lost replies are those of creates under it. */
  readonly root: string;
  readonly emit: (event: HistoryEvent) => void;
  /** The workers that hold a kind of lock now, as the history tells so far. */
  readonly holders: (kind: HoldKind) => number[];
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs the schedule. Resolves once the last fault has ended (not after its "after" phase). */
export async function runNemesis(schedule: readonly ScheduledFault[], targets: NemesisTargets, onFault?: (fault: ScheduledFault) => void): Promise<void> {
  for (const fault of schedule) {
    await sleep(fault.gapMs);
    onFault?.(fault);
    try {
      await inject(fault, targets);
    } catch (err) {
      targets.emit({ type: 'note', at: now(), what: 'info', detail: `fault ${fault.id} (${fault.kind}) failed: ${String(err)}` });
    }
  }
}

async function inject(fault: ScheduledFault, x: NemesisTargets): Promise<void> {
  const mark = (phase: 'start' | 'end', target: string, extra: Partial<FaultEvent> = {}) =>
    x.emit({ type: 'fault', at: now(), id: fault.id, kind: fault.kind, phase, target, ...(fault.worker !== undefined ? { worker: w } : {}), ...extra });
  let w = fault.worker ?? 0;
  if (fault.aim === 'latch' || fault.aim === 'selector') {
    const leaders = x.holders(fault.aim);
    if (leaders.length > 0) w = leaders[fault.pick % leaders.length];
  }
  switch (fault.kind) {
    case 'kill-leader': {
      const leader = await x.cluster.waitForLeader(30_000);
      const target = `server ${leader.serverId} (leader)`;
      mark('start', target);
      await leader.kill();
      await sleep(fault.durationMs);
      await leader.start();
      mark('end', target);
      return;
    }
    case 'kill-follower': {
      await x.cluster.waitForLeader(30_000);
      const followers = await x.cluster.followers();
      if (followers.length === 0) throw new Error('no follower to kill');
      const follower = followers[fault.pick % followers.length];
      const target = `server ${follower.serverId} (follower)`;
      mark('start', target);
      await follower.kill();
      await sleep(fault.durationMs);
      await follower.start();
      mark('end', target);
      return;
    }
    case 'pause-server': {
      await x.cluster.waitForLeader(30_000);
      const server = x.cluster.members[fault.pick % x.cluster.members.length];
      const target = `server ${server.serverId} (${(await server.mode()) ?? 'not serving'})`;
      mark('start', target);
      server.pause();
      await sleep(fault.durationMs);
      server.resume();
      mark('end', target);
      return;
    }
    case 'cut-worker':
      mark('start', `worker ${w}`);
      x.proxies[w].cut();
      await sleep(fault.durationMs);
      x.proxies[w].heal();
      mark('end', `worker ${w}`);
      return;
    case 'blackhole-worker':
      mark('start', `worker ${w}`);
      x.proxies[w].blackhole();
      await sleep(fault.durationMs);
      x.proxies[w].heal();
      mark('end', `worker ${w}`);
      return;
    case 'lost-reply': {
      mark('start', `worker ${w}`);
      let lost: LostReply | undefined;
      let fired: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (fired = resolve));
      const remove = x.proxies[w].intercept(
        loseReplyToCreate(x.root, (l) => {
          lost = l;
          fired();
        }),
      );
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, fault.durationMs)))]);
      clearTimeout(timer);
      remove();
      mark('end', `worker ${w}`, { detail: lost ? `reply to the create of ${lost.path} lost (xid ${lost.xid})` : 'no create came in time' });
      return;
    }
    case 'expire-session': {
      const creds = await x.workers[w].request('creds');
      const sessionId = BigInt(String(creds.sessionId));
      if (sessionId === 0n) {
        mark('start', `worker ${w}`, { detail: 'not connected: nothing to expire' });
        mark('end', `worker ${w}`);
        return;
      }
      const session = `0x${sessionId.toString(16)}`;
      const spawnedAt = now();
      // The servers' own addresses: the worker's proxy may be what is cut.
      const helper = await runHelper('chaos/expire.ts', [JSON.stringify({ connectString: x.cluster.connectString, sessionId: sessionId.toString(), sessionPassword: String(creds.sessionPassword) })], 30_000);
      // The fault starts when the helper begins to attach (its start-up is no part of it).
      mark('start', `worker ${w}`, { session, at: typeof helper.first?.at === 'number' ? helper.first.at : spawnedAt });
      const failed = helper.result?.expired !== true;
      // The end is when the server confirmed the expiry, on the run's clock.
      const expiredAt = typeof helper.result?.at === 'number' ? helper.result.at : undefined;
      mark('end', `worker ${w}`, {
        session,
        ...(expiredAt !== undefined ? { at: expiredAt } : {}),
        ...(failed ? { detail: `the expiring helper ended ${helper.exit}: ${String(helper.result?.error ?? helper.stderr.trim().split('\n').pop() ?? '')}` } : {}),
      });
      if (failed) {
        x.emit({ type: 'note', at: now(), what: 'harness', detail: `expireSession of ${session} ended ${helper.exit}${helper.result?.error ? `: ${String(helper.result.error)}` : ''}` });
      }
      return;
    }
    case 'pause-worker': {
      const worker = x.workers[w];
      // Half the pauses catch the worker between the read and the write of a guarded increment
      // (it stops itself there); the others come at a random moment.
      const inHold = fault.inHold === true;
      let frozenAt: number | undefined;
      let detail = 'at a random moment';
      if (inHold) {
        const freezing = worker.nextEvent((e) => e.type === 'note' && e.what === 'freezing', 5_000);
        await worker.request('freeze-in-hold').catch(() => undefined);
        const event = await freezing;
        if (event) {
          worker.markFrozen();
          frozenAt = event.at;
          detail = `in the middle of a hold: ${(event as { detail: string }).detail}`;
        } else detail = 'at a random moment (no hold came within 5 s)';
      }
      if (frozenAt === undefined) {
        frozenAt = now();
        worker.freeze();
      }
      x.emit({ type: 'fault', at: frozenAt, id: fault.id, kind: fault.kind, phase: 'start', target: `worker ${w}`, worker: w, detail });
      await sleep(fault.durationMs);
      worker.thaw();
      mark('end', `worker ${w}`);
      return;
    }
    case 'burst':
      mark('start', 'all workers');
      await Promise.all(x.workers.map((worker) => worker.request('burst', { flows: 4, durationMs: fault.durationMs }).catch(() => undefined)));
      await sleep(fault.durationMs);
      mark('end', 'all workers');
      return;
  }
}
