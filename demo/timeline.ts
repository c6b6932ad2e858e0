/**
 * A text chart of who waited and who held, over time, one row per worker:
 *
 *   w1  RRRRRRRRR
 *   w3  ····WWWWWW
 */

/** What a worker was doing during a span. */
export type Activity = 'wait' | 'read' | 'write';

export interface ActivitySpan {
  readonly from: number;
  readonly to: number;
  readonly activity: Activity;
}

const MARK: Readonly<Record<Activity, string>> = { wait: '·', read: 'R', write: 'W' };

/** One row per worker, `width` columns from `start` to `end`; a later span wins a shared column. */
export function timeline(rows: ReadonlyArray<{ who: string; spans: readonly ActivitySpan[] }>, start: number, end: number, width: number): string[] {
  const step = Math.max(1, (end - start) / width);
  const nameWidth = Math.max(...rows.map((r) => r.who.length));
  return rows.map(({ who, spans }) => {
    const cells = Array.from({ length: width }, () => ' ');
    for (const span of spans) {
      const from = Math.floor((span.from - start) / step);
      const to = Math.max(from + 1, Math.ceil((span.to - start) / step));
      for (let c = Math.max(0, from); c < Math.min(width, to); c++) cells[c] = MARK[span.activity];
    }
    return `${who.padEnd(nameWidth)}  ${cells.join('')}`.trimEnd();
  });
}
