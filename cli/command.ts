import type { Reader } from './NodeReader';

/** What every report has: the command, the path, and when it was read (this machine's clock, ISO 8601). */
export interface Report {
  readonly command: string;
  readonly path: string;
  readonly at: string;
}

/**
 * One of the CLI's views of a path. `read` gathers the report, with watches when the reader sets
 * them (`watch`); `render` turns it into text for a terminal at `nowMs`, so a live view can age
 * what it shows without reading again. `--json` prints the report itself.
 */
export interface Command<R extends Report = Report> {
  readonly name: 'locks' | 'leader' | 'queue' | 'tree' | 'services';
  /** One line for the help text. */
  readonly summary: string;
  /** `name`: the second argument of a command that takes one (`services <base-path> <name>`). */
  read(reader: Reader, path: string, name?: string): Promise<R>;
  render(report: R, nowMs: number): string;
}

/** How far past the report's reading `nowMs` is, for ageing its nodes in a live view. */
export function sinceRead(report: Report, nowMs: number): number {
  return Math.max(0, nowMs - Date.parse(report.at));
}
