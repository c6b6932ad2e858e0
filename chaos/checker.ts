/**
 * The checker of a chaos run. It reads the whole history (one clock, see history.ts) and checks:
 *
 * - mutual exclusion: no two holds of the mutex, the latch, the selector, or a writer and anyone of
 *   the read-write lock overlap, where a hold runs from acquire (or leadership) until its release,
 *   the abort of its signal, or its fencing by the register; the semaphore never has more holders
 *   than leases; the register never saw a holder enter while another was still inside;
 * - fencing: the register never accepted a token below one it had accepted; tokens increase from
 *   holder to holder; no increment was lost;
 * - queues: every acknowledged item was handled, and every duplicate is one at-least-once allows;
 * - time limits: no acquire outlived its timeout plus the bound of its attempt's own round trips
 *   (DEFAULT_ATTEMPT_TIMEOUT_MS; tryAcquire: the larger of that and DEFAULT_TRY_TIMEOUT_MS) by more
 *   than the slack;
 * - liveness: every worker made progress within a bound after each fault, and nothing was left
 *   behind once the workers stopped;
 * - no crash, no unhandled rejection, no error that is not a ZkError.
 *
 * A worker frozen by the nemesis (SIGSTOP) cannot act, and a session expired from outside cannot be
 * foreseen: its holder keeps a stale lease until it runs again and hears. Such a hold may overlap the
 * next holder's; that is what fencing is for. The checker counts it as stale (not a violation) when
 * the fault began during the hold, before the other holder came, and the hold ended within
 * `staleBoundMs` of the worker being able to act again. Everything else that overlaps is a violation.
 */
import { DEFAULT_ATTEMPT_TIMEOUT_MS, DEFAULT_TRY_TIMEOUT_MS } from '../recipes/locks/InterProcessLock';
import type {
  AcquireEvent,
  ConsumeEvent,
  FaultEvent,
  HistoryEvent,
  HoldBeginEvent,
  HoldKind,
  NoteEvent,
  PutEvent,
  RegisterEvent,
  StateEvent,
} from './history';

export interface CheckOptions {
  readonly sessionTimeoutMs: number;
  readonly semaphoreLeases: number;
  /** How long a stale holder may take to let go once it can act again. */
  readonly staleBoundMs: number;
  /** How long after a fault ends every worker must have held the mutex again. */
  readonly progressBoundMs: number;
  /** Scheduling slack allowed on top of a time limit. */
  readonly timeSlackMs: number;
  /** When the workers were told to stop: the end of the workload. */
  readonly stopAt: number;
}

export interface Violation {
  readonly kind: string;
  readonly at: number;
  readonly detail: string;
  /** The events that show it: the smallest excerpt of the history that tells the story. */
  readonly excerpt: readonly HistoryEvent[];
}

/** A hold, put together from its events. */
export interface Hold {
  readonly id: string;
  readonly worker: number;
  readonly kind: HoldKind;
  readonly lock: string;
  readonly flow: string;
  readonly session: string;
  readonly begin: number;
  token: bigint | undefined;
  node: string | undefined;
  /** Infinity while it never ended (the run stopped first). */
  end: number;
  /** Its lease's signal had aborted before the acquire resolved. */
  readonly bornLost: boolean;
  how: string | undefined;
  reason: string | undefined;
  readonly events: HistoryEvent[];
}

/** A hold that overlapped a later one because its worker was frozen or its session expired from outside. */
export interface StaleHold {
  readonly hold: Hold;
  readonly fault: FaultEvent;
  /** How long it lasted after its worker could act again (resumed, or its session expired). */
  readonly lingeredMs: number;
  readonly rejectedOps: number;
  readonly acceptedOps: number;
}

export interface CheckResult {
  readonly violations: Violation[];
  readonly stale: StaleHold[];
  readonly holds: Hold[];
  readonly faults: ReadonlyArray<{ start: FaultEvent; end: FaultEvent | undefined }>;
  /** Per worker and fault end: how long until the worker held the mutex again. */
  readonly recoveries: ReadonlyArray<{ faultId: number; kind: string; worstMs: number | undefined }>;
  readonly counters: Readonly<Record<string, number>>;
}

const EXCLUSIVE: ReadonlySet<HoldKind> = new Set(['mutex', 'latch', 'selector']);

function byId<T extends { id: string }>(items: Iterable<T>): Map<string, T> {
  const m = new Map<string, T>();
  for (const i of items) m.set(i.id, i);
  return m;
}

export function check(events: readonly HistoryEvent[], o: CheckOptions): CheckResult {
  const violations: Violation[] = [];
  const counters: Record<string, number> = {};
  const count = (key: string, n = 1) => (counters[key] = (counters[key] ?? 0) + n);
  const violate = (kind: string, at: number, detail: string, excerpt: readonly HistoryEvent[]) => violations.push({ kind, at, detail, excerpt });

  // ---------------------------------------------------------------- holds and faults
  const holdList: Hold[] = [];
  const registerEvents: RegisterEvent[] = [];
  const faultStarts: FaultEvent[] = [];
  const faultEnds = new Map<number, FaultEvent>();
  const states: StateEvent[] = [];
  const acquires: AcquireEvent[] = [];
  const puts: PutEvent[] = [];
  const consumes: ConsumeEvent[] = [];
  const notes: NoteEvent[] = [];
  const context: HistoryEvent[] = [];
  const pending = new Map<string, Hold>();
  for (const e of events) {
    switch (e.type) {
      case 'hold-begin': {
        const h = newHold(e);
        holdList.push(h);
        pending.set(h.id, h);
        break;
      }
      case 'hold-token': {
        const h = pending.get(e.hold);
        if (h) {
          h.token = BigInt(e.token);
          h.node = e.node;
          h.events.push(e);
        }
        break;
      }
      case 'hold-end': {
        const h = pending.get(e.hold);
        if (h && h.end === Infinity) {
          h.end = e.at;
          h.how = e.how;
          h.reason = e.reason;
          h.events.push(e);
        }
        break;
      }
      case 'register':
        registerEvents.push(e);
        pending.get(e.hold)?.events.push(e);
        break;
      case 'fault':
        if (e.phase === 'start') faultStarts.push(e);
        else faultEnds.set(e.id, e);
        context.push(e);
        break;
      case 'state':
        states.push(e);
        context.push(e);
        break;
      case 'lag':
        context.push(e);
        break;
      case 'acquire':
        acquires.push(e);
        break;
      case 'put':
        puts.push(e);
        break;
      case 'consume':
        consumes.push(e);
        break;
      case 'note':
        notes.push(e);
        break;
      default:
        break;
    }
  }
  const holds = byId(holdList);
  /**
   * The events of a few holds, and what happened to their workers meanwhile (connection states,
   * event-loop lag, faults), in time order: the minimal story of an overlap.
   */
  const excerptOf = (of: readonly Hold[]): HistoryEvent[] => {
    const from = Math.min(...of.map((h) => h.begin));
    const to = Math.max(...of.map((h) => Math.min(h.end, o.stopAt)));
    const workersOf = new Set(of.map((h) => h.worker));
    const around = context.filter((e) => e.at >= from - 1_000 && e.at <= to && (e.type === 'fault' || workersOf.has((e as { worker: number }).worker)));
    return [...of.flatMap((h) => h.events), ...around].sort((a, b) => a.at - b.at);
  };
  /** What is known of a node left behind: the handling of the queue item it locked, and its owner's connection states. */
  const leftoverStory = (n: NoteEvent): HistoryEvent[] => {
    const name = /\/([^/\s]+) is left behind/.exec(n.detail)?.[1];
    const handled = consumes.filter((c) => c.queueNode === name);
    const from = Math.min(n.at, ...handled.map((c) => c.at)) - 10_000;
    const owner = states.filter((s) => s.worker === n.worker && s.at >= from && s.at <= n.at);
    return [...handled, ...owner, n].sort((a, b) => a.at - b.at);
  };
  const faults = faultStarts.map((start) => ({ start, end: faultEnds.get(start.id) }));
  const workerFaults = faults.filter((f) => f.start.kind === 'pause-worker' || f.start.kind === 'expire-session');

  /** The fault that explains why `h` still held at `at`, if one does (see the module comment). */
  const staleCause = (h: Hold, at: number): { fault: FaultEvent; lingeredMs: number } | undefined => {
    for (const { start, end } of workerFaults) {
      if (start.worker !== h.worker || start.at >= at || end === undefined) continue;
      if (start.kind === 'pause-worker' && start.at >= h.begin - 1 && h.end <= end.at + o.staleBoundMs) {
        return { fault: start, lingeredMs: Math.max(0, h.end - end.at) };
      }
      if (start.kind === 'expire-session' && start.session === h.session && h.begin <= end.at && h.end <= end.at + o.staleBoundMs) {
        return { fault: start, lingeredMs: Math.max(0, h.end - end.at) };
      }
    }
    return undefined;
  };
  const staleHolds = new Map<string, { fault: FaultEvent; lingeredMs: number }>();
  /** Whether `h` holding at `at` (while another holder came) is explained; remembers it as stale if so. */
  const excused = (h: Hold, at: number): boolean => {
    const cause = staleCause(h, at);
    if (cause && !staleHolds.has(h.id)) staleHolds.set(h.id, cause);
    return cause !== undefined;
  };

  // ---------------------------------------------------------------- mutual exclusion, by hold times
  // An acquire that resolved with a lease whose signal had already aborted never held the lock: it
  // overlaps nobody, but the acquire broke its contract (it resolves once the lock is held).
  for (const h of holdList.filter((x) => x.bornLost)) {
    violate('dead-lease', h.begin, `${h.kind} acquire by worker ${h.worker} resolved with a lease already lost (${h.reason ?? '?'}): node ${h.node ?? '?'}, session ${h.session}`, excerptOf([h]));
  }
  const byLock = new Map<string, Hold[]>();
  for (const h of holdList.filter((x) => !x.bornLost)) {
    const key = h.kind === 'rw-read' || h.kind === 'rw-write' ? `rw:${h.lock}` : `${h.kind}:${h.lock}`;
    let list = byLock.get(key);
    if (!list) byLock.set(key, (list = []));
    list.push(h);
  }
  for (const [key, list] of byLock) {
    const active: Hold[] = [];
    for (const b of list) {
      for (let i = active.length - 1; i >= 0; i--) if (active[i].end <= b.begin) active.splice(i, 1);
      if (key.startsWith('sem:')) {
        const inside = [...active, b];
        if (inside.length > o.semaphoreLeases) {
          const stale = active.filter((a) => excused(a, b.begin)).length;
          if (inside.length - stale > o.semaphoreLeases) {
            violate('semaphore-overcommit', b.begin, `${inside.length} holders of ${b.lock} at once (${o.semaphoreLeases} leases, ${stale} stale): ${inside.map((h) => h.id).join(', ')}`, excerptOf(inside));
          }
        }
      } else {
        for (const a of active) {
          const exclusive = EXCLUSIVE.has(b.kind) || a.kind === 'rw-write' || b.kind === 'rw-write';
          if (!exclusive || excused(a, b.begin)) continue;
          const sameNode = a.node !== undefined && a.node === b.node;
          violate(
            sameNode ? 'overlap-same-node' : 'overlap',
            b.begin,
            `${b.kind} ${b.id} (worker ${b.worker}, flow ${b.flow}) began while ${a.kind} ${a.id} (worker ${a.worker}, flow ${a.flow}) still held ${a.lock}` +
              ` for another ${(Math.min(a.end, o.stopAt) - b.begin).toFixed(1)} ms${sameNode ? ' (the same lock node)' : ''}; tokens ${a.token} and ${b.token}`,
            excerptOf([a, b]),
          );
        }
      }
      active.push(b);
    }
  }

  // ---------------------------------------------------------------- the register's view
  const highest = new Map<string, { exclusive: bigint; shared: bigint }>();
  const writes = new Map<string, { accepted: number; last: number }>();
  for (const r of registerEvents) {
    count(`register:${r.op}:${r.accepted ? 'accepted' : 'rejected'}`);
    if (!r.accepted) count('stale-rejected');
    if (r.op === 'enter' || r.op === 'exit') {
      if (r.op === 'enter' && (r.inside?.length ?? 0) > o.semaphoreLeases) {
        const inside = (r.inside ?? []).map((id) => holds.get(id)).filter((h): h is Hold => h !== undefined && h.end > r.at);
        const stale = inside.filter((h) => h.id !== r.hold && excused(h, r.at)).length;
        if (inside.length - stale > o.semaphoreLeases) {
          violate('semaphore-overcommit-register', r.at, `the register saw ${inside.length} semaphore holders inside (${stale} stale): ${inside.map((h) => h.id).join(', ')}`, [r]);
        }
      }
      continue;
    }
    const h = highest.get(r.res) ?? { exclusive: -1n, shared: -1n };
    const token = BigInt(r.token);
    if (r.accepted) {
      const bar = r.op === 'check' ? h.exclusive : h.exclusive > h.shared ? h.exclusive : h.shared;
      if (token < bar) violate('stale-accepted', r.at, `the register accepted ${r.op} with token ${token} below ${bar} on ${r.res}`, [r]);
      if (r.op === 'check') h.shared = token > h.shared ? token : h.shared;
      else h.exclusive = token > h.exclusive ? token : h.exclusive;
      highest.set(r.res, h);
      for (const id of r.inside ?? []) {
        if (id === r.hold) continue;
        const other = holds.get(id);
        if (!other || other.end <= r.at || (r.op === 'check' && other.kind !== 'rw-write')) continue;
        if (excused(other, r.at)) continue;
        violate('register-inside', r.at, `${r.hold} did ${r.op} on ${r.res} while ${id} (worker ${other.worker}) was inside, between its read and its write`, [r]);
      }
      if (r.op === 'write') {
        const w = writes.get(r.res) ?? { accepted: 0, last: 0 };
        w.accepted++;
        w.last = r.after ?? w.last;
        writes.set(r.res, w);
        if (r.expect !== r.before) {
          violate('lost-increment', r.at, `${r.hold} wrote ${r.after} to ${r.res} having read ${r.expect}, but the value was ${r.before}: an increment was lost`, [r]);
        }
      }
    }
  }
  for (const [res, w] of writes) {
    counters[`increments:${res}`] = w.accepted;
    if (w.last !== w.accepted) violate('lost-increment', o.stopAt, `${res} ends at ${w.last} after ${w.accepted} accepted increments`, []);
  }

  // ---------------------------------------------------------------- tokens from holder to holder
  for (const [key, list] of byLock) {
    if (key.startsWith('sem:')) continue;
    let maxAll: { token: bigint; hold: Hold } | undefined;
    let maxWriters: { token: bigint; hold: Hold } | undefined;
    for (const b of list) {
      if (b.token === undefined) continue;
      const bar = b.kind === 'rw-read' ? maxWriters : maxAll;
      if (bar && b.token <= bar.token && bar.hold.node !== b.node && !(b.kind === 'rw-read' && bar.hold.kind === 'rw-read')) {
        violate('token-order', b.begin, `${b.id} on ${b.lock} got token ${b.token}, not above ${bar.token} of the earlier ${bar.hold.id}`, excerptOf([bar.hold, b]));
      }
      if (!maxAll || b.token > maxAll.token) maxAll = { token: b.token, hold: b };
      if (b.kind !== 'rw-read' && (!maxWriters || b.token > maxWriters.token)) maxWriters = { token: b.token, hold: b };
    }
  }

  // ---------------------------------------------------------------- time limits and errors
  const paused = (worker: number, from: number, to: number) =>
    faults.some(({ start, end }) => start.kind === 'pause-worker' && start.worker === worker && start.at < to && (end?.at ?? Infinity) > from);
  for (const a of acquires) {
    count(`acquire:${a.kind}:${a.outcome}`);
    const took = a.endAt - a.at;
    // tryAcquire (asked 0 ms) never waits for a holder, but its round trips have a bound of their
    // own; an acquire's round trips on a live connection may run that much past its timeout.
    const limitMs = a.askedMs === 0 ? Math.max(DEFAULT_TRY_TIMEOUT_MS, DEFAULT_ATTEMPT_TIMEOUT_MS) : a.askedMs + DEFAULT_ATTEMPT_TIMEOUT_MS;
    if (took > limitMs + o.timeSlackMs && !paused(a.worker, a.at, a.endAt)) {
      violate('time-limit', a.endAt, `${a.askedMs === 0 ? 'tryAcquire' : `acquire({ timeoutMs: ${a.askedMs} })`} of ${a.kind} ${a.lock} by worker ${a.worker} took ${took.toFixed(0)} ms and ended ${a.outcome}${a.error ? ` (${a.error})` : ''}`, [a]);
    }
    if (a.untyped) violate('untyped-error', a.endAt, `worker ${a.worker}: ${a.kind} acquire failed with an error that is not a ZkError: ${a.error}`, [a]);
  }
  for (const n of notes) {
    if (n.what === 'crashed' || n.what === 'unhandled-rejection' || n.what === 'unexpected') violate(n.what, n.at, `worker ${n.worker ?? '?'}: ${n.detail}`, [n]);
    if (n.what === 'leftover') violate('leftover-node', n.at, n.detail, leftoverStory(n));
    if (n.what === 'harness') violate('harness-failure', n.at, n.detail, [n]);
    if (n.what === 'drain' && n.detail.startsWith('not drained')) violate('queue-not-drained', n.at, n.detail, [n]);
  }

  // ---------------------------------------------------------------- queues
  const disturbed = (worker: number, from: number, to: number): boolean =>
    states.some((s) => s.worker === worker && s.state !== 'CONNECTED' && s.at >= from && s.at <= to) ||
    faults.some(({ start, end }) => (start.worker === undefined || start.worker === worker) && start.kind !== 'burst' && start.at <= to && (end?.at ?? Infinity) >= from);
  const putsByItem = new Map<string, PutEvent[]>();
  for (const p of puts) {
    count(`put:${p.outcome}`);
    putsByItem.set(p.item, [...(putsByItem.get(p.item) ?? []), p]);
  }
  const consumesByItem = new Map<string, ConsumeEvent[]>();
  for (const c of consumes) {
    count(`consume:${c.outcome}`);
    consumesByItem.set(c.item, [...(consumesByItem.get(c.item) ?? []), c]);
  }
  for (const [item, ps] of putsByItem) {
    const done = (consumesByItem.get(item) ?? []).filter((c) => c.outcome === 'done');
    if (ps.some((p) => p.outcome === 'ok') && done.length === 0) {
      violate('queue-lost', ps[0].endAt, `item ${item} was put (acknowledged) and never handled`, [...ps, ...(consumesByItem.get(item) ?? [])]);
    }
  }
  for (const [item, cs] of consumesByItem) {
    const ps = putsByItem.get(item);
    if (!ps) {
      violate('queue-phantom', cs[0].at, `item ${item} was handled but never put`, cs);
      continue;
    }
    const done = cs.filter((c) => c.outcome === 'done');
    if (done.length < 2) continue;
    count('queue-duplicates', done.length - 1);
    const retried = cs.some((c) => c.outcome !== 'done');
    const putDisturbed = ps.some((p) => disturbed(p.worker, p.at, p.endAt));
    for (let i = 1; i < done.length; i++) {
      const prior = done.slice(0, i);
      const second = done[i];
      const sameNode = prior.find((d) => d.queueNode === second.queueNode);
      // Either handler may be the one a fault explains: the first, disturbed before the item was
      // deleted; or the second, disturbed while it held the item (a frozen consumer whose lock
      // expired, thawed into its handler after the other had handled the item).
      const explained = sameNode
        ? disturbed(sameNode.worker, sameNode.at, second.at) || disturbed(second.worker, sameNode.at, second.at)
        : retried || putDisturbed;
      if (!explained) {
        violate('queue-duplicate', second.at, `item ${item} handled again (${sameNode ? `same node ${second.queueNode}` : `another node ${second.queueNode}`}) with no fault, failure or lost lock to explain it`, [...ps, ...cs]);
      }
    }
  }

  // ---------------------------------------------------------------- progress after each fault
  const mutexBegins = holdList.filter((h) => h.kind === 'mutex').map((h) => ({ at: h.begin, worker: h.worker }));
  const workers = [...new Set(holdList.map((h) => h.worker).concat(notes.filter((n) => n.what === 'ready').map((n) => n.worker ?? -1)))].filter((w) => w >= 0);
  const recoveries: Array<{ faultId: number; kind: string; worstMs: number | undefined }> = [];
  for (const { start, end } of faults) {
    if (!end) continue;
    let worst: number | undefined = 0;
    for (const w of workers) {
      // Holding the mutex as the fault ends, by a hold won while it went on, is progress already
      // (a worker may be in a long hold then). A hold from before the fault is not: it may be stale.
      if (holdList.some((h) => h.kind === 'mutex' && h.worker === w && !h.bornLost && h.begin >= start.at && h.begin < end.at && h.end >= end.at)) continue;
      const next = mutexBegins.find((b) => b.worker === w && b.at >= end.at);
      if (next === undefined || next.at > o.stopAt) {
        if (o.stopAt - end.at >= o.progressBoundMs) {
          violate('no-progress', end.at, `worker ${w} did not hold the mutex again after fault ${start.id} (${start.kind}) ended, within the ${o.stopAt - end.at > 0 ? (o.stopAt - end.at).toFixed(0) : 0} ms left`, [start, end]);
        }
        worst = undefined;
        continue;
      }
      const ms = next.at - end.at;
      if (ms > o.progressBoundMs) violate('no-progress', next.at, `worker ${w} held the mutex again only ${ms.toFixed(0)} ms after fault ${start.id} (${start.kind}) ended (bound ${o.progressBoundMs} ms)`, [start, end]);
      if (worst !== undefined) worst = Math.max(worst, ms);
    }
    recoveries.push({ faultId: start.id, kind: start.kind, worstMs: worst });
  }

  // ---------------------------------------------------------------- stale holds, for the report
  const stale: StaleHold[] = [...staleHolds].map(([id, cause]) => {
    const h = holds.get(id) as Hold;
    const ops = h.events.filter((e): e is RegisterEvent => e.type === 'register');
    return { hold: h, fault: cause.fault, lingeredMs: cause.lingeredMs, rejectedOps: ops.filter((r) => !r.accepted).length, acceptedOps: ops.filter((r) => r.accepted).length };
  });
  counters['holds'] = holdList.length;
  for (const h of holdList) count(`holds:${h.kind}`);
  return { violations: violations.sort((a, b) => a.at - b.at), stale, holds: holdList, faults, recoveries, counters };
}

function newHold(e: HoldBeginEvent): Hold {
  return {
    id: e.hold,
    worker: e.worker,
    kind: e.kind,
    lock: e.lock,
    flow: e.flow,
    session: e.session,
    begin: e.at,
    token: e.token === undefined ? undefined : BigInt(e.token),
    node: e.node,
    end: Infinity,
    bornLost: e.aborted === true,
    how: undefined,
    reason: undefined,
    events: [e],
  };
}
