import { ALL_FAULT_KINDS, ENSEMBLE_KINDS, FAULT_KINDS, MUTATE_KINDS, makeSchedule, type FaultKind, type ScheduledFault, type ScheduleOptions } from './nemesis';

const OPTIONS: ScheduleOptions = { durationMs: 600_000, sessionTimeoutMs: 4_000, workers: 5, kinds: FAULT_KINDS, quick: false };
const SERVER: readonly FaultKind[] = ['kill-leader', 'kill-follower', 'pause-server', ...ENSEMBLE_KINDS];
const POINT: readonly FaultKind[] = ['expire-session', 'lost-reply'];

function groups(schedule: readonly ScheduledFault[]): ScheduledFault[][] {
  const out = new Map<number, ScheduledFault[]>();
  for (const f of schedule) out.set(f.group ?? -f.id, [...(out.get(f.group ?? -f.id) ?? []), f]);
  return [...out.values()];
}

describe('the nemesis schedule', () => {
  it('draws one fault at a time unless asked for overlap', () => {
    const schedule = makeSchedule(2211, OPTIONS);
    expect(schedule.length).toBeGreaterThan(20);
    expect(schedule.every((f) => f.group === undefined && f.offsetMs === undefined && f.gapMs > 0)).toBe(true);
  });

  it('with overlap, draws the same schedule for the same seed', () => {
    expect(makeSchedule(7, { ...OPTIONS, overlap: true })).toEqual(makeSchedule(7, { ...OPTIONS, overlap: true }));
  });

  it.each([1, 2, 3, 42, 2211, 99_999])('with overlap (seed %d), draws groups of 2-3 faults that are on at once', (seed) => {
    const schedule = makeSchedule(seed, { ...OPTIONS, overlap: true });
    const all = groups(schedule);
    expect(all.length).toBeGreaterThan(10);
    for (const group of all) {
      expect(group.length).toBeGreaterThanOrEqual(2);
      expect(group.length).toBeLessThanOrEqual(3);
      // Only the first of a group waits for a quiet gap; the others come while it is on.
      expect(group[0].gapMs).toBeGreaterThan(0);
      expect(group[0].offsetMs).toBe(0);
      expect(group.slice(1).every((f) => f.gapMs === 0)).toBe(true);
      const timed = group.filter((f) => !POINT.includes(f.kind));
      if (timed.length === 0) continue;
      // Faults that take time all end together, and keep the length they would have alone; the
      // others come in the last part of the group, while those are on.
      const span = group[0].durationMs;
      for (const f of timed) expect((f.offsetMs ?? 0) + f.durationMs).toBe(span);
      for (const f of group.filter((g) => POINT.includes(g.kind))) {
        expect(f.offsetMs).toBeGreaterThanOrEqual(0.6 * span - 1);
        expect(f.offsetMs).toBeLessThanOrEqual(0.85 * span + 1);
      }
      // At most one fault on the ensemble, so that a quorum stays up; one burst; one fault per proxy.
      expect(group.filter((f) => SERVER.includes(f.kind)).length).toBeLessThanOrEqual(1);
      expect(group.filter((f) => f.kind === 'burst').length).toBeLessThanOrEqual(1);
      const proxied = group.filter((f) => f.kind === 'cut-worker' || f.kind === 'blackhole-worker').map((f) => f.worker);
      expect(new Set(proxied).size).toBe(proxied.length);
    }
  });

  it('with overlap, draws every kind, and often a server fault together with a worker fault', () => {
    const schedule = [1, 2, 3, 4, 5].flatMap((seed) => makeSchedule(seed, { ...OPTIONS, overlap: true }));
    expect(new Set(schedule.map((f) => f.kind))).toEqual(new Set(FAULT_KINDS));
    const mixed = groups(schedule).filter((g) => g.some((f) => SERVER.includes(f.kind)) && g.some((f) => f.worker !== undefined));
    expect(mixed.length).toBeGreaterThan(10);
  });

  it('with overlap and quick, starts with a worker paused in the middle of a hold, past its session', () => {
    for (const seed of [1, 2, 3]) {
      const schedule = makeSchedule(seed, { ...OPTIONS, durationMs: 30_000, workers: 3, quick: true, overlap: true });
      const first = groups(schedule)[0];
      const pause = first.find((f) => f.kind === 'pause-worker');
      expect(pause?.durationMs).toBeGreaterThan(4_000);
    }
  });

  it('with overlap, stays within the nemesis duration', () => {
    for (const seed of [1, 2, 3]) {
      const schedule = makeSchedule(seed, { ...OPTIONS, durationMs: 30_000, workers: 3, quick: true, overlap: true });
      const total = groups(schedule).reduce((ms, g) => ms + g[0].gapMs + Math.max(...g.map((f) => (f.offsetMs ?? 0) + f.durationMs)), 0);
      expect(total).toBeLessThanOrEqual(30_000);
      expect(schedule.length).toBeGreaterThanOrEqual(2);
    }
  });

  it('draws partitions inside the ensemble only when asked, and then one at a time with other ensemble faults', () => {
    expect(makeSchedule(5, OPTIONS).some((f) => ENSEMBLE_KINDS.includes(f.kind))).toBe(false);
    const alone = makeSchedule(5, { ...OPTIONS, kinds: ALL_FAULT_KINDS });
    expect(new Set(alone.filter((f) => ENSEMBLE_KINDS.includes(f.kind)).map((f) => f.kind))).toEqual(new Set(ENSEMBLE_KINDS));
    for (const group of groups(makeSchedule(5, { ...OPTIONS, kinds: ALL_FAULT_KINDS, overlap: true }))) {
      expect(group.filter((f) => SERVER.includes(f.kind)).length).toBeLessThanOrEqual(1);
    }
  });

  it('draws mutated replies only when asked, on a worker, for half to twice the session timeout', () => {
    for (const seed of [1, 2, 3, 2211]) {
      expect(makeSchedule(seed, OPTIONS).some((f) => f.kind === 'mutate-replies')).toBe(false);
      expect(makeSchedule(seed, { ...OPTIONS, kinds: [...FAULT_KINDS, ...ENSEMBLE_KINDS] }).some((f) => f.kind === 'mutate-replies')).toBe(false);
    }
    const kinds = [...FAULT_KINDS, ...MUTATE_KINDS];
    for (const overlap of [false, true]) {
      const mutated = [1, 2, 3].flatMap((seed) => makeSchedule(seed, { ...OPTIONS, kinds, overlap })).filter((f) => f.kind === 'mutate-replies');
      expect(mutated.length).toBeGreaterThan(5);
      for (const f of mutated) {
        expect(f.worker).toBeGreaterThanOrEqual(0);
        expect(f.worker).toBeLessThan(OPTIONS.workers);
        expect(f.durationMs).toBeGreaterThanOrEqual(2_000);
        expect(f.durationMs).toBeLessThanOrEqual(8_000);
      }
    }
    expect(ALL_FAULT_KINDS).toContain('mutate-replies');
  });
});
