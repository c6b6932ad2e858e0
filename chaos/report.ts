/**
 * The report of a chaos run, as Markdown: faults by kind, operations, stale writes rejected, stale
 * holds and what became of them, violations with their history excerpts, and figures per phase
 * (before, during and after each fault), as etcd's robustness tests give them.
 */
import type { CheckResult, Hold, Violation } from './checker';
import type { HistoryEvent, LagEvent } from './history';
import type { ScheduledFault } from './nemesis';

export interface RunInfo {
  readonly seed: number;
  readonly command: string;
  readonly transport: string;
  readonly policy: string;
  readonly workers: number;
  readonly sessionTimeoutMs: number;
  readonly nemesisMs: number;
  /** Monotonic ms of the run's start, and the wall clock then. */
  readonly startMono: number;
  readonly startWall: number;
  readonly stopAt: number;
  readonly schedule: readonly ScheduledFault[];
  readonly historyFile: string | undefined;
  readonly bounds: { readonly staleBoundMs: number; readonly progressBoundMs: number; readonly timeSlackMs: number };
}

/** Examples shown per violation kind; the rest are counted. */
const EXAMPLES_PER_KIND = 3;
/** Events shown per example. */
const EXCERPT_EVENTS = 14;

function quantile(values: readonly number[], q: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function ms(v: number | undefined): string {
  return v === undefined ? '-' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${v.toFixed(0)} ms`;
}

export function buildReport(result: CheckResult, events: readonly HistoryEvent[], info: RunInfo): string {
  const rel = (at: number) => `+${((at - info.startMono) / 1000).toFixed(3)}s`;
  const c = result.counters;
  const get = (k: string) => c[k] ?? 0;
  const lines: string[] = [];
  const push = (...l: string[]) => lines.push(...l);

  push(`# Chaos run, seed ${info.seed}`, '');
  push(`- Started ${new Date(info.startWall).toISOString()}; nemesis ${(info.nemesisMs / 1000).toFixed(0)} s; ${info.workers} workers; transport ${info.transport}; error policy '${info.policy}'; session timeout ${info.sessionTimeoutMs} ms.`);
  push(`- Reproduce the schedule: \`${info.command}\``);
  if (info.historyFile) push(`- History saved to \`${info.historyFile}\`.`);
  push(`- Bounds: a stale holder lets go within ${ms(info.bounds.staleBoundMs)} of running again; every worker holds the mutex within ${ms(info.bounds.progressBoundMs)} (${(info.bounds.progressBoundMs / info.sessionTimeoutMs).toFixed(1)} session timeouts) of a fault's end; time limits get ${ms(info.bounds.timeSlackMs)} of slack.`);
  push('');

  push(`## Verdict: ${result.violations.length === 0 ? '0 violations' : `${result.violations.length} violation(s)`}`, '');

  // ---------------------------------------------------------------- summary
  const byKind = new Map<string, number>();
  for (const f of result.faults) byKind.set(f.start.kind, (byKind.get(f.start.kind) ?? 0) + 1);
  push('## Faults injected', '', '| kind | count |', '| --- | --- |');
  for (const [kind, n] of [...byKind].sort()) push(`| ${kind} | ${n} |`);
  push(`| **total** | ${result.faults.length} |`, '');

  const holdKinds = ['mutex', 'rw-write', 'rw-read', 'sem', 'latch', 'selector'];
  push('## Operations', '', '| what | count |', '| --- | --- |');
  for (const k of holdKinds) push(`| holds: ${k} | ${get(`holds:${k}`)} |`);
  const acquireOutcomes = Object.keys(c).filter((k) => k.startsWith('acquire:')).sort();
  for (const k of acquireOutcomes.filter((k) => !k.endsWith(':held'))) push(`| ${k.replace('acquire:', 'acquire ')} | ${c[k]} |`);
  for (const res of ['mutex', 'rw', 'latch', 'selector']) push(`| increments accepted: ${res} | ${get(`increments:${res}`)} |`);
  push(`| reader checks accepted | ${get('register:check:accepted')} |`);
  push(`| queue puts acknowledged / failed | ${get('put:ok')} / ${get('put:failed')} |`);
  push(`| queue items handled / failed on purpose / lock lost | ${get('consume:done')} / ${get('consume:failed')} / ${get('consume:lost')} |`);
  push(`| queue duplicates (at-least-once) | ${get('queue-duplicates')} |`);
  push('');

  // ---------------------------------------------------------------- fencing
  const rejected = events.filter((e): e is Extract<HistoryEvent, { type: 'register' }> => e.type === 'register' && !e.accepted);
  push('## Stale writes rejected by the register', '');
  push(`${rejected.length} operations rejected (${rejected.filter((r) => r.op === 'write').length} writes, ${rejected.filter((r) => r.op === 'read').length} reads, ${rejected.filter((r) => r.op === 'check').length} reader checks).`, '');
  const staleByCause = new Map<string, typeof result.stale>();
  for (const s of result.stale) staleByCause.set(s.fault.kind, [...(staleByCause.get(s.fault.kind) ?? []), s]);
  push('Stale holds: holders that a frozen process or a session expired from outside left holding while the next holder came.', '');
  push('| cause | stale holds | their ops rejected | their ops accepted | let go after running again: median / max |', '| --- | --- | --- | --- | --- |');
  for (const [cause, list] of staleByCause) {
    const lingered = list.map((s) => s.lingeredMs);
    push(`| ${cause} | ${list.length} | ${list.reduce((n, s) => n + s.rejectedOps, 0)} | ${list.reduce((n, s) => n + s.acceptedOps, 0)} | ${ms(quantile(lingered, 0.5))} / ${ms(Math.max(...lingered))} |`);
  }
  if (result.stale.length === 0) push('| (none) | 0 | | | |');
  push('');
  for (const s of result.stale.slice(0, 5)) {
    push(`- ${s.hold.id} (${s.hold.kind}, worker ${s.hold.worker}, token ${s.hold.token ?? '?'}) held from ${rel(s.hold.begin)} to ${rel(s.hold.end)}; fault ${s.fault.id} (${s.fault.kind}) at ${rel(s.fault.at)}; ${s.rejectedOps} op(s) rejected, ${s.acceptedOps} accepted; ended by ${s.hold.how}${s.hold.reason ? ` (${s.hold.reason})` : ''}.`);
  }
  push('');

  // ---------------------------------------------------------------- violations
  push('## Violations', '');
  if (result.violations.length === 0) push('None.', '');
  const violationsByKind = new Map<string, Violation[]>();
  for (const v of result.violations) violationsByKind.set(v.kind, [...(violationsByKind.get(v.kind) ?? []), v]);
  if (violationsByKind.size > 0) {
    push('| kind | count | first at |', '| --- | --- | --- |');
    for (const [kind, list] of violationsByKind) push(`| ${kind} | ${list.length} | ${rel(list[0].at)} |`);
    push('');
  }
  for (const [kind, list] of violationsByKind) {
    push(`### ${kind} (${list.length})`, '');
    for (const v of list.slice(0, EXAMPLES_PER_KIND)) {
      push(`- at ${rel(v.at)}: ${v.detail}`);
      const fault = phaseOf(result, v.at);
      if (fault) push(`  - ${fault}`);
      if (v.excerpt.length > 0) {
        push('', '  ```');
        for (const e of v.excerpt.slice(0, EXCERPT_EVENTS)) push(`  ${rel(e.at)} ${describe(e)}`);
        if (v.excerpt.length > EXCERPT_EVENTS) push(`  … ${v.excerpt.length - EXCERPT_EVENTS} more events`);
        push('  ```', '');
      }
    }
    if (list.length > EXAMPLES_PER_KIND) push(`- and ${list.length - EXAMPLES_PER_KIND} more of this kind.`, '');
  }

  // ---------------------------------------------------------------- per phase
  push('## Per fault: before, during, after', '');
  push('Holds begun per second, acquire latency (p50 / p99 of acquires that got the lock), operations rejected by the register, acquires that timed out or failed, violations; and how long until every worker held the mutex again.', '');
  push('| # | fault | target | length | phase | holds/s | acquire p50 / p99 | rejected | timeouts / errors | violations |', '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  const starts = result.faults;
  for (let i = 0; i < starts.length; i++) {
    const { start, end } = starts[i];
    const endAt = end?.at ?? start.at;
    // Faults of an overlapping group are on at once: "before" starts after the last fault that
    // ended before this one began, "after" ends before the next fault that begins after it ended.
    const prevEnd = Math.max(info.startMono, ...starts.slice(0, i).map((f) => f.end?.at ?? f.start.at).filter((at) => at <= start.at));
    const nextStart = Math.min(info.stopAt, ...starts.slice(i + 1).map((f) => f.start.at).filter((at) => at >= endAt));
    const windows: Array<[string, number, number]> = [
      ['before', start.at - (start.at - prevEnd) / 2, start.at],
      ['during', start.at, endAt],
      ['after', endAt, endAt + (nextStart - endAt) / 2],
    ];
    const recovery = result.recoveries.find((r) => r.faultId === start.id);
    for (const [phase, from, to] of windows) {
      const f = phaseFigures(result.holds, events, result.violations, from, to);
      const detail = end?.detail ?? start.detail;
      const label = phase === 'before' ? `${start.id} | ${start.kind} | ${start.target}${detail ? `: ${detail}` : ''} | ${ms(endAt - start.at)}` : ' | | | ';
      push(`| ${label} | ${phase}${phase === 'after' ? ` (recovered in ${ms(recovery?.worstMs)})` : ''} | ${f.rate} | ${ms(f.p50)} / ${ms(f.p99)} | ${f.rejected} | ${f.timeouts} / ${f.errors} | ${f.violations} |`);
    }
  }
  push('');

  // ---------------------------------------------------------------- client behaviour
  const releases = events.filter((e): e is Extract<HistoryEvent, { type: 'release' }> => e.type === 'release').map((e) => e.releaseMs);
  const lags = events.filter((e): e is LagEvent => e.type === 'lag');
  const thaws = thawDelays(result.faults, lags);
  const firstAfterThaw = new Set(thaws.map((t) => t.lag));
  const pausedLag = (e: LagEvent) =>
    firstAfterThaw.has(e) ||
    result.faults.some((f) => f.start.kind === 'pause-worker' && f.start.worker === e.worker && f.start.at <= e.at && (f.end?.at ?? Infinity) + 1000 >= e.at);
  const unexplainedLags = lags.filter((e) => !pausedLag(e)).map((e) => e.lagMs);
  push('## Client behaviour', '');
  push(`- release(): p50 ${ms(quantile(releases, 0.5))}, p99 ${ms(quantile(releases, 0.99))}, max ${ms(releases.length ? Math.max(...releases) : undefined)} over ${releases.length} releases.`);
  push(`- Event loop late by more than 250 ms, outside the nemesis's own pauses: ${unexplainedLags.length} times${unexplainedLags.length ? `, worst ${ms(Math.max(...unexplainedLags))}` : ''}.`);
  if (thaws.length > 0) {
    const worst = Math.max(...thaws.map((t) => t.afterMs));
    push(`- A frozen worker's timers first ran ${ms(worst)} after its SIGCONT at worst (${thaws.length} freeze${thaws.length === 1 ? '' : 's'}). The stale-hold bound counts from the SIGCONT; until then no timer of the worker ran, the client's stall detector's included.`);
  }
  push('');

  push('## Schedule', '', '| # | kind | gap | length | worker |', '| --- | --- | --- | --- | --- |');
  for (const f of info.schedule) {
    const aim = f.aim === 'latch' || f.aim === 'selector' ? ` (the ${f.aim} leader, if any)` : '';
    push(`| ${f.id} | ${f.kind}${f.inHold ? ' (in a hold)' : ''} | ${ms(f.gapMs)} | ${ms(f.durationMs)} | ${f.worker ?? ''}${aim} |`);
  }
  push('');
  return lines.join('\n');
}

/**
 * For each freeze (pause-worker) that ended: how long after its SIGCONT the worker's timers first
 * ran. That run is the worker's first `lag` event after the freeze began: the workers report a
 * tick late by more than 250 ms, and a freeze of a second or more makes the first tick after it
 * that late.
 */
export function thawDelays(faults: CheckResult['faults'], lags: readonly LagEvent[]): Array<{ faultId: number; afterMs: number; lag: LagEvent }> {
  const delays: Array<{ faultId: number; afterMs: number; lag: LagEvent }> = [];
  for (const { start, end } of faults) {
    if (start.kind !== 'pause-worker' || end === undefined) continue;
    let lag: LagEvent | undefined;
    for (const l of lags) if (l.worker === start.worker && l.at > start.at && (lag === undefined || l.at < lag.at)) lag = l;
    if (lag !== undefined && lag.at >= end.at) delays.push({ faultId: start.id, afterMs: lag.at - end.at, lag });
  }
  return delays;
}

/** Which fault phase a moment falls in, in words. */
function phaseOf(result: CheckResult, at: number): string | undefined {
  for (const { start, end } of result.faults) {
    if (at >= start.at && at <= (end?.at ?? start.at)) return `during fault ${start.id} (${start.kind}, ${start.target})`;
  }
  const before = [...result.faults].reverse().find((f) => (f.end?.at ?? f.start.at) < at);
  return before ? `${((at - (before.end?.at ?? before.start.at)) / 1000).toFixed(1)} s after fault ${before.start.id} (${before.start.kind}, ${before.start.target}) ended` : undefined;
}

function phaseFigures(holds: readonly Hold[], events: readonly HistoryEvent[], violations: readonly Violation[], from: number, to: number) {
  const seconds = Math.max(0.001, (to - from) / 1000);
  const begun = holds.filter((h) => h.begin >= from && h.begin < to).length;
  const acquires = events.filter((e): e is Extract<HistoryEvent, { type: 'acquire' }> => e.type === 'acquire' && e.endAt >= from && e.endAt < to);
  const waits = acquires.filter((a) => a.outcome === 'held').map((a) => a.endAt - a.at);
  return {
    rate: (begun / seconds).toFixed(1),
    p50: quantile(waits, 0.5),
    p99: quantile(waits, 0.99),
    rejected: events.filter((e) => e.type === 'register' && !e.accepted && e.at >= from && e.at < to).length,
    timeouts: acquires.filter((a) => a.outcome === 'timeout').length,
    errors: acquires.filter((a) => a.outcome === 'error').length,
    violations: violations.filter((v) => v.at >= from && v.at < to).length,
  };
}

/** One event in one line, for excerpts. */
export function describe(e: HistoryEvent): string {
  switch (e.type) {
    case 'hold-begin':
      return `worker ${e.worker} ${e.hold}: holds ${e.kind} ${e.lock} (flow ${e.flow}, token ${e.token ?? '?'}, node ${e.node ?? '?'}, session ${e.session})`;
    case 'hold-token':
      return `worker ${e.worker} ${e.hold}: token ${e.token} (node ${e.node})`;
    case 'hold-end':
      return `worker ${e.worker} ${e.hold}: hold ends (${e.how}${e.reason ? `: ${e.reason}` : ''})`;
    case 'release':
      return `worker ${e.worker} ${e.hold}: release resolved after ${e.releaseMs.toFixed(0)} ms${e.error ? ` (${e.error})` : ''}`;
    case 'register':
      return `register: ${e.hold} ${e.op} ${e.res} token ${e.token} ${e.accepted ? 'accepted' : `REJECTED (highest ${e.highest})`}${e.before !== undefined ? ` ${e.before}->${e.after}` : ''}${e.inside?.length ? ` inside: ${e.inside.join(', ')}` : ''}`;
    case 'state':
      return `worker ${e.worker}: ${e.state} (session ${e.session})`;
    case 'acquire':
      return `worker ${e.worker}: acquire ${e.kind} (asked ${e.askedMs} ms) -> ${e.outcome} after ${(e.endAt - e.at).toFixed(0)} ms${e.error ? ` (${e.error})` : ''}`;
    case 'fault':
      return `nemesis: ${e.kind} ${e.phase} on ${e.target}${e.session ? ` (session ${e.session})` : ''}${e.detail ? `: ${e.detail}` : ''}`;
    case 'put':
      return `worker ${e.worker}: put ${e.item} -> ${e.outcome}${e.error ? ` (${e.error})` : ''}`;
    case 'consume':
      return `worker ${e.worker}: handled ${e.item} from ${e.queueNode} -> ${e.outcome}`;
    case 'lag':
      return `worker ${e.worker}: event loop ${e.lagMs.toFixed(0)} ms late`;
    case 'note':
      return `${e.worker !== undefined ? `worker ${e.worker}` : 'runner'}: ${e.what}: ${e.detail.split('\n')[0]}`;
  }
}
