import type { FaultEvent, LagEvent } from './history';
import { thawDelays } from './report';

const fault = (id: number, kind: string, phase: 'start' | 'end', at: number, worker?: number): FaultEvent => ({ type: 'fault', at, id, kind, phase, target: `worker ${worker}`, worker });
const lag = (at: number, worker: number, lagMs: number): LagEvent => ({ type: 'lag', at, worker, lagMs });

describe('thawDelays', () => {
  it("measures from the SIGCONT to the frozen worker's first late tick after the freeze began", () => {
    const faults = [
      { start: fault(1, 'pause-worker', 'start', 1_000, 2), end: fault(1, 'pause-worker', 'end', 8_400, 2) },
      { start: fault(2, 'pause-worker', 'start', 20_000, 0), end: fault(2, 'pause-worker', 'end', 26_000, 0) },
    ];
    // Out of order, with a lag of another worker and one before the freeze: only the worker's first after the start counts.
    const lags = [lag(26_008, 0, 6_000), lag(10_498, 2, 9_500), lag(9_000, 1, 600), lag(500, 2, 300), lag(12_000, 2, 400)];
    expect(thawDelays(faults, lags).map((d) => [d.faultId, d.afterMs])).toEqual([
      [1, 2_098],
      [2, 8],
    ]);
  });

  it('leaves out other faults, freezes not yet ended, and ticks that came before the thaw', () => {
    const faults = [
      { start: fault(1, 'expire-session', 'start', 1_000, 2), end: fault(1, 'expire-session', 'end', 2_000, 2) },
      { start: fault(2, 'pause-worker', 'start', 3_000, 1), end: undefined },
      { start: fault(3, 'pause-worker', 'start', 5_000, 0), end: fault(3, 'pause-worker', 'end', 9_000, 0) },
    ];
    expect(thawDelays(faults, [lag(2_500, 2, 1_000), lag(4_000, 1, 900), lag(6_000, 0, 900)])).toEqual([]);
  });
});
