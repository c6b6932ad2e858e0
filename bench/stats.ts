/** Small statistics helpers for the benchmarks. */

export function percentile(sortedAsc: readonly number[], p: number): number {
  if (sortedAsc.length === 0) return Number.NaN;
  const i = Math.min(sortedAsc.length - 1, Math.max(0, Math.ceil((p / 100) * sortedAsc.length) - 1));
  return sortedAsc[i];
}

export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/** Nanosecond clock as milliseconds with sub-microsecond precision. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export function fmt(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

/** Percentile of unsorted values. */
export function pct(values: readonly number[], p: number): number {
  return percentile([...values].sort((a, b) => a - b), p);
}

/** `a / b`, NaN when either is missing or b is 0. */
export function ratio(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return Number.NaN;
  return a / b;
}

/** Rotates a list by `by` places, so no library always runs first. */
export function rotate<T>(list: readonly T[], by: number): T[] {
  if (list.length === 0) return [];
  const k = ((by % list.length) + list.length) % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}

/** Runs `call` `n` times, with `width` calls in flight at once. */
export async function inFlight(n: number, width: number, call: () => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        next++;
        await call();
      }
    }),
  );
}

/** The median of each column of `rows` (per-member figures of several runs); [] when there are no rows. */
export function medianEach(rows: ReadonlyArray<readonly number[]>): number[] {
  if (rows.length === 0) return [];
  return rows[0].map((_, k) => median(rows.map((r) => r[k])));
}
