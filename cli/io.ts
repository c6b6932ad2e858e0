// Its own file: run.ts imports the commands that write (watch, server), so they cannot take it from run.ts.
/** Where the CLI writes. `stdout.isTTY` picks a redrawn screen for `watch`. */
export interface CliIo {
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean };
  readonly stderr: { write(text: string): unknown };
  /** Ends a `watch` (the executable aborts it on SIGINT and SIGTERM); a one-shot command stops early. */
  readonly stop?: AbortSignal;
}
