/**
 * The demo's proofs, from what the workers reported: holds that overlap, leaderships that
 * overlap. A reported hold lies within the real one (a worker reports "granted" after its acquire
 * returns and "released" before it releases), and every process reads one clock (`now` in
 * protocol.ts), so an overlap found here is a real one.
 */

/** A span of time during which `who` held something. */
export interface Span {
  readonly who: string;
  readonly from: number;
  readonly to: number;
  /** A read hold may overlap other read holds; nothing else may overlap. */
  readonly shared?: boolean;
}

/** Every pair of spans that overlap and may not. */
export function overlaps(spans: readonly Span[]): Array<[Span, Span]> {
  const sorted = [...spans].sort((a, b) => a.from - b.from);
  const found: Array<[Span, Span]> = [];
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j].from < sorted[i].to; j++) {
      if (!(sorted[i].shared && sorted[j].shared)) found.push([sorted[i], sorted[j]]);
    }
  }
  return found;
}

/** Whether any two of the spans overlap in time at all, shared or not. */
export function anyTogether(spans: readonly Span[]): boolean {
  const sorted = [...spans].sort((a, b) => a.from - b.from);
  let end = -Infinity;
  for (const s of sorted) {
    if (s.from < end) return true;
    end = Math.max(end, s.to);
  }
  return false;
}

/** A duration for the summary: `850 ms`, `3.2 s`. */
export function seconds(ms: number): string {
  return ms < 1_000 ? `${Math.round(ms)} ms` : `${(ms / 1_000).toFixed(1)} s`;
}
