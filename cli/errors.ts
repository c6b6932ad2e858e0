/**
 * What the operator CLI reports when it cannot answer, and the exit code each case gets. Every
 * failure ends as one line on stderr and one of these codes, never a stack trace.
 */

/** The CLI's exit codes. Documented in the README and in `zk-recipes --help`. */
export const ExitCode = Object.freeze({
  /** The answer was printed. */
  OK: 0,
  /** Anything else went wrong: a ZooKeeper error such as NOAUTH, or a fault of the CLI itself. */
  FAILED: 1,
  /** Bad command line: unknown command or flag, missing or invalid path, bad flag value. */
  USAGE: 2,
  /** The ensemble could not be reached, or did not answer, within --timeout-ms. */
  UNREACHABLE: 3,
  /** The path does not exist. */
  NO_NODE: 4,
  /** The path exists but holds no recipe the command understands. */
  NOT_A_RECIPE: 5,
  /** `server`: the server could not start (Java or ZooKeeper missing, a port in use), or a member ended on its own. */
  NO_SERVER: 6,
  /** Interrupted (Ctrl-C) before the answer: 128 + SIGINT, as shells report it. A `watch` ends with OK. */
  INTERRUPTED: 130,
});

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure the CLI reports as one line with its exit code. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    readonly exitCode: ExitCodeValue,
    message: string,
  ) {
    super(message);
  }
}

/** Bad command line. */
export function usageError(message: string): CliError {
  return new CliError(ExitCode.USAGE, message);
}
