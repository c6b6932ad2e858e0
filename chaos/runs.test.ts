import { parseArgs } from './run';
import { batchExitCode, batchSeeds, finalLine, operationsOf, summaryLine, summaryMarkdown, type RunSummary } from './runs';

const clean: RunSummary = { seed: 40, transport: 'protocol', faults: 14, operations: 5321, violations: 0, violationKinds: [], durationMs: 71_230 };
const failing: RunSummary = {
  seed: 41,
  transport: 'protocol',
  faults: 12,
  operations: 4000,
  violations: 3,
  violationKinds: ['overlap', 'no-progress'],
  durationMs: 65_000,
  historyFile: 'chaos/out/runs/history-seed41.json',
};
const broken: RunSummary = { seed: 42, transport: 'protocol', faults: 0, operations: 0, violations: 0, violationKinds: [], durationMs: 9_000, error: 'workers not ready: 1 of 3' };

describe('the runner options for many runs', () => {
  it('take --runs as a count of quick runs, from the base seed', () => {
    const args = parseArgs(['--runs', '20', '--seed', '7', '--transport', 'native']);
    expect(args).toMatchObject({ runs: 20, seed: 7, quick: true, durationS: 30, workers: 3, transport: 'native', overlap: false });
  });

  it('leave a single run as it was', () => {
    expect(parseArgs(['--seed', '7'])).toMatchObject({ runs: 1, quick: false, durationS: 600, workers: 5 });
  });

  it('let an explicit duration or worker count override the quick defaults of --runs', () => {
    expect(parseArgs(['--duration', '60', '--runs', '5', '--workers', '4'])).toMatchObject({ runs: 5, durationS: 60, workers: 4 });
  });

  it('take --overlap alone, with --runs or with --quick', () => {
    expect(parseArgs(['--overlap'])).toMatchObject({ overlap: true, runs: 1 });
    expect(parseArgs(['--runs', '3', '--overlap'])).toMatchObject({ overlap: true, runs: 3 });
  });

  it('refuse a count that is not a positive integer, or a missing one', () => {
    expect(() => parseArgs(['--runs', '0'])).toThrow(/--runs takes an integer of at least 1/);
    expect(() => parseArgs(['--runs', '2.5'])).toThrow(/--runs takes an integer/);
    expect(() => parseArgs(['--runs', 'many'])).toThrow(/--runs takes an integer/);
    expect(() => parseArgs(['--runs'])).toThrow(/--runs needs a value/);
    expect(() => parseArgs(['--runs', '--quick'])).toThrow(/--runs needs a value/);
  });

  it('refuse --check with many runs: it checks one saved history', () => {
    expect(() => parseArgs(['--check', 'history.json', '--runs', '3'])).toThrow(/--check/);
  });
});

describe('a batch of runs', () => {
  it('gives each run the next seed, so each replays alone', () => {
    expect(batchSeeds(2211, 4)).toEqual([2211, 2212, 2213, 2214]);
    expect(batchSeeds(0, 1)).toEqual([0]);
  });

  it('counts as operations every acquire, queue put and item handled, and nothing else', () => {
    const counters = { 'acquire:mutex:held': 10, 'acquire:sem:timeout': 2, 'put:ok': 5, 'put:failed': 1, 'consume:done': 4, holds: 10, 'holds:mutex': 10, 'register:write:accepted': 9, 'increments:mutex': 9 };
    expect(operationsOf(counters)).toBe(22);
  });

  it('says per run: seed, transport, faults, operations, violations, duration', () => {
    expect(summaryLine(clean, 0, 20)).toBe('run 1/20 seed 40 protocol: 14 faults, 5321 operations, 0 violations, 71.2 s');
    expect(summaryLine(failing, 1, 20)).toBe(
      'run 2/20 seed 41 protocol: 12 faults, 4000 operations, 3 violations (overlap, no-progress), 65.0 s; history chaos/out/runs/history-seed41.json',
    );
    expect(summaryLine(broken, 2, 20)).toBe('run 3/20 seed 42 protocol: did not run to the end (workers not ready: 1 of 3), 9.0 s');
  });

  it('sums the batch up, naming the seeds that found violations and those that did not run', () => {
    expect(finalLine([clean, clean])).toBe('2 runs on protocol: 0 with violations (0 in all), 0 did not run to the end; 28 faults, 10642 operations, 2.4 min');
    expect(finalLine([clean, failing, broken])).toBe(
      '3 runs on protocol: 1 with violations (3 in all), 1 did not run to the end; 26 faults, 9321 operations, 2.4 min; seeds with violations: 41; seeds that did not run to the end: 42',
    );
  });

  it('exits non-zero when any run found a violation, and otherwise when any run did not run to the end', () => {
    expect(batchExitCode([clean, clean])).toBe(0);
    expect(batchExitCode([clean, failing])).toBe(1);
    expect(batchExitCode([failing, broken])).toBe(1);
    expect(batchExitCode([clean, broken])).toBe(2);
  });

  it('writes a Markdown summary with a row per run and the total', () => {
    const md = summaryMarkdown([clean, failing, broken], { command: 'npm run chaos -- --runs 3 --seed 40', startedAt: new Date(0), setting: '30 s of nemesis per run' });
    expect(md).toContain('**3 runs on protocol: 1 with violations');
    expect(md).toContain('| 1 | 40 | protocol | 14 | 5321 | 0 | 71.2 s |  |');
    expect(md).toContain('| 2 | 41 | protocol | 12 | 4000 | 3 (overlap, no-progress) | 65.0 s | chaos/out/runs/history-seed41.json |');
    expect(md).toContain('did not run to the end: workers not ready: 1 of 3');
  });
});

describe('the runner options for partitions inside the ensemble', () => {
  it('add the ensemble partitions to the kinds with --partitions, and take them by name with --faults', () => {
    expect(parseArgs(['--partitions']).faults).toEqual(expect.arrayContaining(['kill-leader', 'isolate-leader', 'isolate-follower', 'split', 'flap-link']));
    expect(parseArgs(['--faults', 'split,cut-worker']).faults).toEqual(['split', 'cut-worker']);
    expect(parseArgs(['--faults', 'split', '--partitions']).faults).toEqual(['split', 'isolate-leader', 'isolate-follower', 'flap-link']);
  });

  it('leave them out by default, so earlier seeds keep their schedules', () => {
    expect(parseArgs([]).faults).not.toContain('isolate-leader');
  });
});
