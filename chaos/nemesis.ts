/**
 * The nemesis of a chaos run: a schedule of faults drawn from the run's seed, and the executor that
 * injects them, each fault (or group of faults) after a quiet gap, recording when each starts and
 * ends.
 *
 * By default one fault at a time, as etcd's robustness tests do, so that the figures before, during
 * and after each fault tell what that fault did. With `overlap`, faults come in groups of 2-3 that
 * overlap, as real outages stack (a server restart during a client partition, an expiry during a
 * leader kill): the longest fault of a group starts first, the others start later so that every
 * fault of the group ends at about the same moment, and the faults that take no time (an expiry, a
 * lost reply) come in the last part of the group, while the others are still on. Ending together
 * keeps the checker's bound on recovery meaningful: it counts from each fault's end, and no fault
 * of a group ends long before the others.
 *
 * The seed fixes the kinds, targets, durations and offsets; which server leads when a "kill the
 * leader" comes is up to the ensemble, and is recorded.
 */
import type { FaultProxy, TestingCluster } from '../src/testing';
import { MUTATION_KINDS, loseReplyToCreate, mutateReplies, type LostReply, type MutationKind } from './frames';
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
  | 'burst'
  | 'isolate-leader'
  | 'isolate-follower'
  | 'split'
  | 'flap-link'
  | 'mutate-replies';

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

/**
 * Partitions inside the ensemble (the cluster's links through proxies): the leader cut off from
 * both followers; a follower blackholed; a 2-1 split with a member drawn by the seed, cut or
 * blackholed; a link between the leader and a follower that goes down and up every 0.25-1 s.
 * Not drawn unless asked for (`--partitions` or `--faults`), so that the seeds of earlier runs
 * still give the schedules they gave.
 */
export const ENSEMBLE_KINDS: readonly FaultKind[] = Object.freeze(['isolate-leader', 'isolate-follower', 'split', 'flap-link'] as FaultKind[]);

/**
 * A worker's replies mutated at random for a while (flipped bytes, cut chunks, chunks sent twice;
 * see `mutateReplies` in frames.ts): its client must drop each connection that went wrong and
 * carry on in its session. Not drawn unless asked for (`--mutate` or `--faults`), as the
 * partitions.
 */
export const MUTATE_KINDS: readonly FaultKind[] = Object.freeze(['mutate-replies'] as FaultKind[]);

/** Every kind the nemesis knows. */
export const ALL_FAULT_KINDS: readonly FaultKind[] = Object.freeze([...FAULT_KINDS, ...ENSEMBLE_KINDS, ...MUTATE_KINDS]);

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
  /** With `overlap`: the id of the first fault of its group (all faults of a group share it). */
  readonly group?: number;
  /** With `overlap`: when it starts, from the start of its group. */
  readonly offsetMs?: number;
}

export interface ScheduleOptions {
  readonly durationMs: number;
  readonly sessionTimeoutMs: number;
  readonly workers: number;
  readonly kinds: readonly FaultKind[];
  /** Shorter gaps, and the fault that exercises fencing (a worker paused past its session) first. */
  readonly quick: boolean;
  /** Groups of 2-3 overlapping faults instead of one at a time. */
  readonly overlap?: boolean;
}

/** Faults that act on the ensemble: one at a time even in a group, so that a quorum stays up. */
const SERVER_KINDS: ReadonlySet<FaultKind> = new Set<FaultKind>(['kill-leader', 'kill-follower', 'pause-server', ...ENSEMBLE_KINDS]);
/** Faults that set a worker's proxy's mode: two on one proxy would undo each other. */
const PROXY_KINDS: ReadonlySet<FaultKind> = new Set<FaultKind>(['cut-worker', 'blackhole-worker']);
/** Faults that take no time of their own: in a group they come while the others are on. */
const POINT_KINDS: ReadonlySet<FaultKind> = new Set<FaultKind>(['expire-session', 'lost-reply']);

function targetsWorker(kind: FaultKind): boolean {
  return kind.endsWith('-worker') || kind === 'lost-reply' || kind === 'expire-session' || kind === 'mutate-replies';
}

/** The schedule a seed gives: kinds in shuffled rounds, so that every kind comes up as often. */
export function makeSchedule(seed: number, o: ScheduleOptions): ScheduledFault[] {
  if (o.overlap === true) return makeOverlappingSchedule(seed, o);
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
    const worker = targetsWorker(kind) ? rng.int(0, o.workers - 1) : undefined;
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

/**
 * The schedule of `overlap`: groups of 2-3 faults, their kinds taken in shuffled rounds as one at a
 * time does. Within a group: at most one fault on the ensemble (a quorum stays up, so the group
 * ends in recovery rather than in a long outage nobody could tell apart), at most one burst, and no
 * two faults on one worker's proxy. Each fault keeps the length it would have alone.
 */
function makeOverlappingSchedule(seed: number, o: ScheduleOptions): ScheduledFault[] {
  const rng = new Random(deriveSeed(seed, 0));
  const t = o.sessionTimeoutMs;
  const faults: ScheduledFault[] = [];
  let round: FaultKind[] = [];
  let elapsed = 0;
  let id = 1;
  for (let groupNo = 0; ; groupNo++) {
    const size = rng.int(2, 3);
    const members: Array<{ kind: FaultKind; worker: number | undefined; durationMs: number }> = [];
    const proxyWorkers = new Set<number>();
    // Quick runs exercise fencing first, as one at a time does (see makeSchedule).
    if (o.quick && groupNo === 0 && o.kinds.includes('pause-worker')) {
      members.push({ kind: 'pause-worker', worker: rng.int(0, o.workers - 1), durationMs: duration('pause-worker', t, rng) });
    }
    const fits = (kind: FaultKind) =>
      !(SERVER_KINDS.has(kind) && members.some((m) => SERVER_KINDS.has(m.kind))) &&
      !(kind === 'burst' && members.some((m) => m.kind === 'burst')) &&
      !(PROXY_KINDS.has(kind) && proxyWorkers.size >= o.workers);
    while (members.length < size) {
      let i = round.findIndex(fits);
      if (i < 0) {
        // Nothing left in this round fits the group: the next round starts (what is left comes later).
        round = round.concat(rng.shuffle(o.kinds));
        i = round.findIndex(fits);
        if (i < 0) break;
      }
      const [kind] = round.splice(i, 1);
      let worker: number | undefined;
      if (PROXY_KINDS.has(kind)) {
        const free = Array.from({ length: o.workers }, (_, n) => n).filter((n) => !proxyWorkers.has(n));
        worker = rng.pick(free);
        proxyWorkers.add(worker);
      } else if (targetsWorker(kind)) worker = rng.int(0, o.workers - 1);
      members.push({ kind, worker, durationMs: duration(kind, t, rng) });
    }
    const gapMs = o.quick ? rng.int(t, Math.round(1.5 * t)) : rng.int(2 * t, 3 * t);
    const timed = members.filter((m) => !POINT_KINDS.has(m.kind));
    // A group of point faults only lasts as long as the longest wait for a lost reply.
    const spanMs = timed.length > 0 ? Math.max(...timed.map((m) => m.durationMs)) : Math.max(...members.map((m) => m.durationMs), 1_000);
    if (elapsed + gapMs + spanMs > o.durationMs) break;
    elapsed += gapMs + spanMs;
    const group = id;
    // The longest first: it is on when every other fault of the group starts.
    const ordered = [...timed].sort((a, b) => b.durationMs - a.durationMs).concat(members.filter((m) => POINT_KINDS.has(m.kind)));
    const drawn = ordered.map((m, i) => {
      const point = POINT_KINDS.has(m.kind);
      let offsetMs = spanMs - m.durationMs;
      // Among point faults only, the first opens the group and the next comes while it waits.
      if (point) offsetMs = timed.length > 0 ? rng.int(Math.round(0.6 * spanMs), Math.round(0.85 * spanMs)) : i === 0 ? 0 : rng.int(0, Math.round(spanMs / 2));
      // A lost reply waits for a create only while the others are on.
      const durationMs = m.kind === 'lost-reply' ? Math.max(1_000, spanMs - offsetMs) : m.durationMs;
      return { ...m, offsetMs, durationMs };
    });
    drawn.sort((a, b) => a.offsetMs - b.offsetMs);
    for (const [i, m] of drawn.entries()) {
      const pick = rng.int(0, 1_000_000);
      // The first fault of a quick run's first group pauses a worker in the middle of a hold.
      const inHold = m.kind === 'pause-worker' ? o.quick && groupNo === 0 && i === 0 : undefined;
      const aim = m.worker !== undefined && !inHold && m.kind !== 'lost-reply' ? rng.pick(['latch', 'selector', 'worker'] as const) : undefined;
      faults.push({
        id: id++,
        kind: m.kind,
        gapMs: i === 0 ? gapMs : 0,
        durationMs: m.durationMs,
        ...(m.worker !== undefined ? { worker: m.worker } : {}),
        pick,
        ...(inHold !== undefined ? { inHold } : {}),
        ...(aim !== undefined ? { aim } : {}),
        group,
        offsetMs: m.offsetMs,
      });
    }
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
    case 'isolate-leader':
    case 'isolate-follower':
    case 'split':
      return rng.int(1_000, 2 * t);
    case 'flap-link':
      return rng.int(2_000, 2 * t);
    case 'mutate-replies':
      return rng.int(Math.round(t / 2), 2 * t);
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
  /** What `mutate-replies` may do to a chunk; default all kinds. */
  readonly mutations?: readonly MutationKind[];
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs the schedule. Resolves once the last fault has ended (not after its "after" phase). */
export async function runNemesis(schedule: readonly ScheduledFault[], targets: NemesisTargets, onFault?: (fault: ScheduledFault) => void): Promise<void> {
  for (let i = 0; i < schedule.length; ) {
    const first = schedule[i];
    let j = i + 1;
    while (first.group !== undefined && j < schedule.length && schedule[j].group === first.group) j++;
    const group = schedule.slice(i, j);
    i = j;
    await sleep(first.gapMs);
    await Promise.all(
      group.map(async (fault) => {
        await sleep(fault.offsetMs ?? 0);
        onFault?.(fault);
        const others = group.filter((f) => f !== fault).map((f) => `${f.id} (${f.kind})`);
        try {
          const end = await begin(fault, targets, others.length > 0 ? `overlaps fault${others.length > 1 ? 's' : ''} ${others.join(', ')}` : undefined);
          await sleep(SELF_TIMED.has(fault.kind) ? 0 : fault.durationMs);
          await end();
        } catch (err) {
          targets.emit({ type: 'note', at: now(), what: 'info', detail: `fault ${fault.id} (${fault.kind}) failed: ${String(err)}` });
        }
      }),
    );
  }
}

/** Faults that wait for themselves inside `begin` (an expiry, a lost reply, a burst runs its course). */
const SELF_TIMED: ReadonlySet<FaultKind> = new Set<FaultKind>(['expire-session', 'lost-reply']);

/**
 * Starts one fault and returns what ends it; the caller waits the fault's length in between. A
 * fault that takes no time of its own (an expiry, a lost reply) is over when this resolves.
 * `overlaps` names the other faults of its group, for the history.
 */
async function begin(fault: ScheduledFault, x: NemesisTargets, overlaps: string | undefined): Promise<() => Promise<void>> {
  const mark = (phase: 'start' | 'end', target: string, extra: Partial<FaultEvent> = {}) =>
    x.emit({
      type: 'fault',
      at: now(),
      id: fault.id,
      kind: fault.kind,
      phase,
      target,
      ...(fault.worker !== undefined ? { worker: w } : {}),
      ...(phase === 'start' && overlaps !== undefined ? { detail: overlaps } : {}),
      ...extra,
    });
  const nothing = () => Promise.resolve();
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
      return async () => {
        await leader.start();
        mark('end', target);
      };
    }
    case 'kill-follower': {
      await x.cluster.waitForLeader(30_000);
      const followers = await x.cluster.followers();
      if (followers.length === 0) throw new Error('no follower to kill');
      const follower = followers[fault.pick % followers.length];
      const target = `server ${follower.serverId} (follower)`;
      mark('start', target);
      await follower.kill();
      return async () => {
        await follower.start();
        mark('end', target);
      };
    }
    case 'pause-server': {
      await x.cluster.waitForLeader(30_000);
      const server = x.cluster.members[fault.pick % x.cluster.members.length];
      const target = `server ${server.serverId} (${(await server.mode()) ?? 'not serving'})`;
      mark('start', target);
      server.pause();
      return async () => {
        server.resume();
        mark('end', target);
      };
    }
    case 'cut-worker':
      mark('start', `worker ${w}`);
      x.proxies[w].cut();
      return async () => {
        x.proxies[w].heal();
        mark('end', `worker ${w}`);
      };
    case 'blackhole-worker':
      mark('start', `worker ${w}`);
      x.proxies[w].blackhole();
      return async () => {
        x.proxies[w].heal();
        mark('end', `worker ${w}`);
      };
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
      return nothing;
    }
    case 'expire-session': {
      const creds = await x.workers[w].request('creds');
      const sessionId = BigInt(String(creds.sessionId));
      if (sessionId === 0n) {
        mark('start', `worker ${w}`, { detail: 'not connected: nothing to expire' });
        mark('end', `worker ${w}`);
        return nothing;
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
      return nothing;
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
      x.emit({ type: 'fault', at: frozenAt, id: fault.id, kind: fault.kind, phase: 'start', target: `worker ${w}`, worker: w, detail: overlaps !== undefined ? `${detail}; ${overlaps}` : detail });
      return async () => {
        worker.thaw();
        mark('end', `worker ${w}`);
      };
    }
    case 'isolate-leader': {
      const leader = await x.cluster.waitForLeader(30_000);
      const target = `server ${leader.serverId} (leader) cut off from both followers`;
      mark('start', target);
      x.cluster.isolate(leader.serverId, 'cut');
      return async () => {
        x.cluster.healLinks();
        mark('end', target);
      };
    }
    case 'isolate-follower': {
      await x.cluster.waitForLeader(30_000);
      const followers = await x.cluster.followers();
      if (followers.length === 0) throw new Error('no follower to isolate');
      const follower = followers[fault.pick % followers.length];
      const target = `server ${follower.serverId} (follower) blackholed from both others`;
      mark('start', target);
      x.cluster.isolate(follower.serverId, 'blackhole');
      return async () => {
        x.cluster.healLinks();
        mark('end', target);
      };
    }
    case 'split': {
      await x.cluster.waitForLeader(30_000);
      const member = x.cluster.members[fault.pick % x.cluster.members.length];
      const how = fault.pick % 2 === 0 ? 'cut' : 'blackhole';
      const target = `server ${member.serverId} (${(await member.mode()) ?? 'not serving'}) alone, ${how}`;
      mark('start', target);
      x.cluster.isolate(member.serverId, how);
      return async () => {
        x.cluster.healLinks();
        mark('end', target);
      };
    }
    case 'flap-link': {
      const leader = await x.cluster.waitForLeader(30_000);
      const followers = await x.cluster.followers();
      if (followers.length === 0) throw new Error('no follower to flap a link to');
      const follower = followers[fault.pick % followers.length];
      const link = x.cluster.link(leader.serverId, follower.serverId);
      const target = `link between server ${leader.serverId} (leader) and server ${follower.serverId} (follower)`;
      const rng = new Random(deriveSeed(fault.pick, fault.id));
      let flapping = true;
      mark('start', target);
      const flaps = (async () => {
        let down = false;
        while (flapping) {
          down = !down;
          if (down) link.cut();
          else link.heal();
          await sleep(rng.int(250, 1_000));
        }
      })();
      return async () => {
        flapping = false;
        await flaps;
        link.heal();
        mark('end', target);
      };
    }
    case 'mutate-replies': {
      // 2-10 % of the chunks from the servers, drawn from the seed. The bytes a client can only
      // take on trust (the answer to the handshake, a reply's zxid) are spared: see the README.
      const rate = (2 + (fault.pick % 9)) / 100;
      const kinds = x.mutations ?? MUTATION_KINDS;
      const { interceptor, counts } = mutateReplies({ seed: deriveSeed(fault.pick, fault.id), rate, kinds, spareTrusted: true });
      mark('start', `worker ${w}`, { detail: `${rate * 100} % of the chunks from the servers mutated (${kinds.join(', ')})` });
      const remove = x.proxies[w].intercept(interceptor);
      return async () => {
        remove();
        mark('end', `worker ${w}`, { detail: `${counts.chunks} chunks: ${counts.flip} flipped, ${counts.truncate} cut, ${counts.duplicate} sent twice` });
      };
    }
    case 'burst':
      mark('start', 'all workers');
      await Promise.all(x.workers.map((worker) => worker.request('burst', { flows: 4, durationMs: fault.durationMs }).catch(() => undefined)));
      return async () => {
        mark('end', 'all workers');
      };
  }
}
