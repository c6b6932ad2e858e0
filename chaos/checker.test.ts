import { check, type CheckOptions } from './checker';
import type { FaultEvent, HistoryEvent, HoldBeginEvent, HoldKind, RegisterEvent } from './history';

const OPTIONS: CheckOptions = { sessionTimeoutMs: 4_000, semaphoreLeases: 3, staleBoundMs: 2_000, progressBoundMs: 12_000, timeSlackMs: 1_000, stopAt: 10_000 };

let nextHold = 0;

/** A hold of `kind` by `worker` from `from` to `to`, with the events the workload records. */
function hold(worker: number, from: number, to: number, o: { kind?: HoldKind; token?: bigint; node?: string; session?: string; how?: 'release' | 'lost' | 'fenced' } = {}): HistoryEvent[] {
  const id = `w${worker}-h${nextHold++}`;
  const begin: HoldBeginEvent = {
    type: 'hold-begin',
    at: from,
    worker,
    kind: o.kind ?? 'mutex',
    lock: '/chaos/mutex',
    hold: id,
    flow: 'mutex',
    token: String(o.token ?? BigInt(from)),
    node: o.node ?? `/chaos/mutex/${id}`,
    session: o.session ?? `0x${worker + 1}`,
  };
  return [begin, { type: 'hold-end', at: to, worker, hold: id, how: o.how ?? 'release' }];
}

function fault(id: number, kind: string, worker: number, from: number, to: number, session?: string): FaultEvent[] {
  const base = { type: 'fault' as const, id, kind, target: `worker ${worker}`, worker, ...(session ? { session } : {}) };
  return [
    { ...base, at: from, phase: 'start' },
    { ...base, at: to, phase: 'end' },
  ];
}

function kinds(events: HistoryEvent[], options: Partial<CheckOptions> = {}): string[] {
  return check(
    [...events].sort((a, b) => a.at - b.at),
    { ...OPTIONS, ...options },
  ).violations.map((v) => v.kind);
}

describe('checker', () => {
  it('accepts holds that follow one another, and finds two that overlap', () => {
    expect(kinds([...hold(0, 0, 100), ...hold(1, 100, 200), ...hold(0, 250, 300)])).toEqual([]);
    expect(kinds([...hold(0, 0, 100), ...hold(1, 99, 200)])).toEqual(['overlap']);
  });

  it('names an overlap on one lock node: two flows of a process sharing a lease', () => {
    expect(kinds([...hold(0, 0, 100, { node: '/chaos/mutex/n1', token: 5n }), ...hold(0, 50, 120, { node: '/chaos/mutex/n1', token: 5n })])).toEqual(['overlap-same-node']);
  });

  it('lets readers share the read-write lock, never with a writer', () => {
    const readers = [...hold(0, 0, 100, { kind: 'rw-read', token: 1n }), ...hold(1, 10, 90, { kind: 'rw-read', token: 2n })];
    expect(kinds(readers)).toEqual([]);
    expect(kinds([...readers, ...hold(2, 50, 150, { kind: 'rw-write', token: 3n })])).toEqual(['overlap', 'overlap']);
  });

  it('counts semaphore holders against the leases', () => {
    const three = [...hold(0, 0, 100, { kind: 'sem' }), ...hold(1, 1, 100, { kind: 'sem' }), ...hold(2, 2, 100, { kind: 'sem' })];
    expect(kinds(three)).toEqual([]);
    expect(kinds([...three, ...hold(3, 50, 60, { kind: 'sem' })])).toEqual(['semaphore-overcommit']);
  });

  it('excuses a holder frozen during its hold that lets go soon after it runs again', () => {
    const frozen = [...fault(1, 'pause-worker', 0, 50, 6_000), ...hold(0, 0, 6_100), ...hold(1, 4_500, 4_600)];
    const result = check(frozen.sort((a, b) => a.at - b.at), OPTIONS);
    expect(result.violations).toEqual([]);
    expect(result.stale.map((s) => [s.hold.worker, s.fault.kind, Math.round(s.lingeredMs)])).toEqual([[0, 'pause-worker', 100]]);
  });

  it('does not excuse a frozen holder that keeps holding long after it runs again', () => {
    expect(kinds([...fault(1, 'pause-worker', 0, 50, 6_000), ...hold(0, 0, 9_000), ...hold(1, 4_500, 4_600)])).toEqual(['overlap']);
  });

  it('does not excuse an overlap that began before the pause', () => {
    expect(kinds([...hold(0, 0, 6_100), ...hold(1, 40, 4_600), ...fault(1, 'pause-worker', 0, 50, 6_000)])).toContain('overlap');
  });

  it('excuses the holder of a session expired from outside only in that session', () => {
    const expired = fault(1, 'expire-session', 0, 1_000, 1_020, '0xabc');
    expect(kinds([...expired, ...hold(0, 0, 1_050, { session: '0xabc' }), ...hold(1, 1_030, 1_100)])).toEqual([]);
    expect(kinds([...expired, ...hold(0, 0, 1_050, { session: '0xdef' }), ...hold(1, 1_030, 1_100)])).toEqual(['overlap']);
  });

  it('finds a lost increment and a stale token the register accepted', () => {
    const write = (at: number, token: string, before: number, expect: number): RegisterEvent => ({
      type: 'register',
      at,
      worker: 0,
      hold: `w0-h${at}`,
      res: 'mutex',
      op: 'write',
      token,
      accepted: true,
      highest: '0',
      before,
      after: expect + 1,
      expect,
    });
    expect(kinds([write(1, '10', 0, 0), write(2, '11', 1, 1)])).toEqual([]);
    expect(kinds([write(1, '10', 0, 0), write(2, '11', 1, 0)])).toEqual(['lost-increment', 'lost-increment']);
    expect(kinds([write(1, '10', 0, 0), write(2, '9', 1, 1)])).toEqual(['stale-accepted']);
  });

  it('finds tokens that do not increase from holder to holder', () => {
    expect(kinds([...hold(0, 0, 10, { token: 7n }), ...hold(1, 20, 30, { token: 6n })])).toEqual(['token-order']);
  });

  it('finds an acknowledged queue item never handled, and a duplicate nothing explains', () => {
    const put = (item: string): HistoryEvent => ({ type: 'put', at: 1, worker: 0, item, endAt: 2, outcome: 'ok' });
    const done = (item: string, at: number, worker: number): HistoryEvent => ({ type: 'consume', at, worker, item, queueNode: `queue-${item}`, endAt: at + 1, outcome: 'done' });
    expect(kinds([put('a'), done('a', 10, 1)])).toEqual([]);
    expect(kinds([put('a')])).toEqual(['queue-lost']);
    expect(kinds([put('a'), done('a', 10, 1), done('a', 20, 2)])).toEqual(['queue-duplicate']);
    // The first consumer lost its connection before the item was deleted: at least once allows it.
    expect(kinds([put('a'), done('a', 10, 1), { type: 'state', at: 12, worker: 1, state: 'SUSPENDED', session: '0x1' }, done('a', 20, 2)])).toEqual([]);
    // The second consumer was frozen holding the item, its lock expired, and the first took the
    // item over; thawed, the second ran its handler just after the freeze ended.
    expect(kinds([put('a'), ...fault(1, 'pause-worker', 2, 5, 19), done('a', 10, 1), done('a', 20, 2)])).toEqual([]);
    // A freeze of a third worker explains nothing.
    expect(kinds([put('a'), ...fault(1, 'pause-worker', 3, 5, 19), done('a', 10, 1), done('a', 20, 2)])).toEqual(['queue-duplicate']);
  });

  it('finds an acquire that outlived its timeout, unless its worker was frozen', () => {
    // The limit is the timeout plus the attempt's own bound (1 s by default), plus the slack (1 s).
    const slow: HistoryEvent = { type: 'acquire', at: 0, worker: 0, kind: 'mutex', lock: '/chaos/mutex', call: 'a', askedMs: 2_000, outcome: 'timeout', endAt: 4_500 };
    expect(kinds([slow])).toEqual(['time-limit']);
    expect(kinds([{ ...slow, endAt: 3_900 }])).not.toContain('time-limit');
    expect(kinds([slow, ...fault(1, 'pause-worker', 0, 100, 3_000)])).not.toContain('time-limit');
  });

  it('finds a worker that made no progress after a fault', () => {
    const f = fault(1, 'kill-leader', 0, 1_000, 2_000);
    expect(kinds([...f, ...hold(0, 3_000, 3_010)], { stopAt: 30_000 })).toEqual([]);
    expect(kinds([...f, ...hold(0, 20_000, 20_010)], { stopAt: 30_000 })).toEqual(['no-progress']);
  });

  it('counts a hold won during a fault and still held as it ends as progress, but not a hold from before the fault', () => {
    // Native seed 6099: worker 0 was in a 3.7 s hold, won during the fault, when the fault ended.
    const f = fault(1, 'pause-worker', 2, 1_000, 8_000);
    expect(kinds([...f, ...hold(0, 6_000, 9_700), ...hold(0, 25_000, 25_010)], { stopAt: 30_000 })).toEqual([]);
    expect(kinds([...f, ...hold(0, 500, 9_700), ...hold(0, 25_000, 25_010)], { stopAt: 30_000 })).toEqual(['no-progress']);
  });

  it('reports a lease that was lost before its acquire resolved, and does not count it as a holder', () => {
    const begin: HoldBeginEvent = { type: 'hold-begin', at: 50, worker: 1, kind: 'mutex', lock: '/chaos/mutex', hold: 'dead', flow: 'mutex', token: '60', node: '/chaos/mutex/n9', session: '0x9', aborted: true };
    expect(kinds([...hold(0, 0, 100, { token: 40n }), begin, { type: 'hold-end', at: 50, worker: 1, hold: 'dead', how: 'lost', reason: 'LOST' }])).toEqual(['dead-lease']);
  });
});
