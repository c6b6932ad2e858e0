/**
 * Many chaos runs in a row, as etcd's robustness tests repeat each scenario: the seeds of a batch,
 * one summary line per run, the line that sums the batch up, the batch's Markdown summary and its
 * exit code. The runner (`run.ts`) does the runs; this module only says what they came to.
 */

/** What one run of a batch came to. */
export interface RunSummary {
  readonly seed: number;
  /** The transport the workers used ('native' or 'protocol'), as they reported it. */
  readonly transport: string;
  /** Faults injected (each fault of an overlapping group counts). */
  readonly faults: number;
  /** Calls the workload made: acquires, queue puts and queue items handled. */
  readonly operations: number;
  readonly violations: number;
  /** The kinds of the violations found, each once, in order of first appearance. */
  readonly violationKinds: readonly string[];
  readonly durationMs: number;
  /** The run could not be carried out (the harness failed): no verdict. */
  readonly error?: string;
  /** The saved history, for a run with violations (or with `--save-history`). */
  readonly historyFile?: string;
  readonly reportFile?: string;
}

/** The seeds of a batch of `runs`: the base seed, then one more each run, so each run replays alone. */
export function batchSeeds(base: number, runs: number): number[] {
  return Array.from({ length: runs }, (_, i) => base + i);
}

/** Operations of a run, from the checker's counters: every acquire, queue put and queue item handled. */
export function operationsOf(counters: Readonly<Record<string, number>>): number {
  let n = 0;
  for (const [key, value] of Object.entries(counters)) {
    if (key.startsWith('acquire:') || key.startsWith('put:') || key.startsWith('consume:')) n += value;
  }
  return n;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** One line per run: `run 3/20 seed 45 protocol: 14 faults, 5321 operations, 0 violations, 71.2 s`. */
export function summaryLine(s: RunSummary, index: number, of: number): string {
  const head = `run ${index + 1}/${of} seed ${s.seed} ${s.transport}`;
  if (s.error !== undefined) return `${head}: did not run to the end (${s.error}), ${seconds(s.durationMs)}`;
  const kinds = s.violationKinds.length > 0 ? ` (${s.violationKinds.join(', ')})` : '';
  const history = s.historyFile !== undefined && s.violations > 0 ? `; history ${s.historyFile}` : '';
  return `${head}: ${s.faults} faults, ${s.operations} operations, ${s.violations} violations${kinds}, ${seconds(s.durationMs)}${history}`;
}

/** The last line of a batch: how many runs, how many found violations, what they added up to. */
export function finalLine(all: readonly RunSummary[]): string {
  const failing = all.filter((s) => s.violations > 0);
  const broken = all.filter((s) => s.error !== undefined);
  const sum = (f: (s: RunSummary) => number) => all.reduce((n, s) => n + f(s), 0);
  const transports = [...new Set(all.map((s) => s.transport))].join(', ');
  const minutes = (sum((s) => s.durationMs) / 60_000).toFixed(1);
  const seeds = failing.length > 0 ? `; seeds with violations: ${failing.map((s) => s.seed).join(', ')}` : '';
  const unrun = broken.length > 0 ? `; seeds that did not run to the end: ${broken.map((s) => s.seed).join(', ')}` : '';
  return (
    `${all.length} runs on ${transports || 'no transport'}: ${failing.length} with violations (${sum((s) => s.violations)} in all), ` +
    `${broken.length} did not run to the end; ${sum((s) => s.faults)} faults, ${sum((s) => s.operations)} operations, ${minutes} min${seeds}${unrun}`
  );
}

/** 1 when any run found a violation; otherwise 2 when any run could not be carried out; else 0. */
export function batchExitCode(all: readonly RunSummary[]): number {
  if (all.some((s) => s.violations > 0)) return 1;
  if (all.some((s) => s.error !== undefined)) return 2;
  return 0;
}

/** What a batch's Markdown summary says about how it was run. */
export interface BatchInfo {
  readonly command: string;
  readonly startedAt: Date;
  /** The options every run shared, in words. */
  readonly setting: string;
}

/** The batch as Markdown: one row per run, then the total; kept with the run reports. */
export function summaryMarkdown(all: readonly RunSummary[], info: BatchInfo): string {
  const lines = [
    `# Chaos runs: ${all.length} in a row`,
    '',
    `- Started ${info.startedAt.toISOString()}; ${info.setting}.`,
    `- Command: \`${info.command}\` (each run replays alone with its seed).`,
    '',
    `**${finalLine(all)}**`,
    '',
    '| run | seed | transport | faults | operations | violations | duration | history |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  all.forEach((s, i) => {
    const violations = s.error !== undefined ? `did not run to the end: ${s.error.replace(/\|/g, '\\|')}` : `${s.violations}${s.violationKinds.length > 0 ? ` (${s.violationKinds.join(', ')})` : ''}`;
    lines.push(`| ${i + 1} | ${s.seed} | ${s.transport} | ${s.faults} | ${s.operations} | ${violations} | ${seconds(s.durationMs)} | ${s.historyFile ?? ''} |`);
  });
  return `${lines.join('\n')}\n`;
}
