import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/** How a guarded JVM's standard streams are wired. */
export type GuardedJvmStdio =
  /** stdin is /dev/null; stdout and stderr are appended to `logFile`. */
  | 'log'
  /** stdin, stdout and stderr are pipes to this process (`child.stdin`, `child.stdout`, `child.stderr`). */
  | 'pipe';

/** What `spawnGuardedJvm` starts. */
export interface GuardedJvmOptions {
  /** The `java` executable. */
  java: string;
  /** Options before `-cp`, such as `-Xmx256m` or `-Dkey=value`. */
  jvmOptions?: readonly string[];
  /** The `-cp` value. */
  classpath: string;
  /** The class whose `main` runs. */
  mainClass: string;
  /** Arguments of `main`. */
  args?: readonly string[];
  /** 'log' (the default) or 'pipe'. */
  stdio?: GuardedJvmStdio;
  /**
   * Where the JVM's output goes. Required with stdio 'log' (stdout and stderr are appended to it);
   * optional with 'pipe', where it receives stderr instead of the pipe.
   */
  logFile?: string;
  /** The wrapper shell's `$0`, shown by `ps`. */
  name?: string;
  /** The environment of the JVM; this process's environment by default. */
  env?: NodeJS.ProcessEnv;
}

/** A JVM started by `spawnGuardedJvm`. */
export interface GuardedJvm {
  /**
   * The wrapper shell. Its 'exit' event means the JVM is gone; with stdio 'pipe', its `stdin`,
   * `stdout` and `stderr` are the JVM's (stderr is null when `logFile` is given).
   */
  readonly child: ChildProcess;
  /**
   * The JVM's own pid, for signals (SIGSTOP, SIGKILL…): signalling `child` would only reach the
   * shell. Rejects when the shell ends before the JVM starts. Already has a handler, so leaving it
   * unawaited never raises an unhandled rejection.
   */
  readonly pid: Promise<number>;
}

// The JVM runs under a tiny shell that holds our end of a pipe (the "lifeline"): when this process
// dies, even by SIGKILL, the pipe closes, `cat` returns and the JVM is killed. The JVM's pid is
// reported first so that pause/resume/kill signal the JVM itself.
//
// The shell first closes every descriptor it inherited beyond the ones we hand it. The ZooKeeper C
// client opens its sockets without close-on-exec, so a child would otherwise keep a client's socket
// alive after the client closes it; the socket's stale registration in Node's event loop then fires
// for whatever new socket reuses the number, and that handle spins without ever connecting.
//
// 'log': fd 0 is the lifeline, fd 1 carries the pid; the JVM's stdin is /dev/null and its output
// goes to the log file.
// 'pipe': fds 0-2 are the JVM's own, fd 3 is the lifeline, fd 4 carries the pid (so the pid never
// mixes with the JVM's output); stderr goes to the log file when one is given. The JVM's stdin is
// named explicitly (`<&0`): a non-interactive shell gives a background job /dev/null otherwise.
//
// The closing loop must not redirect its own stderr (`done 2>/dev/null`): bash parks the real stderr
// on fd 10 for the loop's duration, the loop closes that copy too, and the shell (and so the JVM) is
// left with /dev/null as stderr. Listed descriptors that are no longer open (the listing's own pipe)
// are skipped instead, so the loop prints no errors.
const WRAPPER = [
  'mode=$1 log=$2',
  'shift 2',
  'if [ "$mode" = pipe ]; then keep=4; else keep=2; fi',
  'for fd in $(ls /proc/$$/fd); do [ "$fd" -gt "$keep" ] && [ -e "/proc/$$/fd/$fd" ] && eval "exec $fd>&-"; done',
  'if [ "$mode" = pipe ]; then',
  '  [ -n "$log" ] && exec 2>>"$log"',
  '  "$@" <&0 3<&- 4>&- &',
  '  j=$!',
  '  echo "$j" >&4',
  '  exec 4>&-',
  '  ( cat >/dev/null; kill -9 "$j" 2>/dev/null ) <&3 >/dev/null 2>&1 &',
  '  w=$!',
  '  exec 3<&-',
  'else',
  '  exec 3<&0',
  '  "$@" </dev/null 3<&- >>"$log" 2>&1 &',
  '  j=$!',
  '  echo "$j"',
  '  ( cat <&3 >/dev/null; kill -9 "$j" 2>/dev/null ) &',
  '  w=$!',
  '  exec 3<&-',
  'fi',
  'wait "$j"; rc=$?',
  'kill "$w" 2>/dev/null',
  'exit $rc',
].join('\n');

/**
 * Starts a JVM that cannot outlive this process and inherits none of its stray descriptors.
 *
 * The JVM runs under a small bash wrapper that closes every inherited descriptor beyond the
 * ones handed to it (the ZooKeeper C client's sockets lack close-on-exec), and kills the JVM with
 * SIGKILL as soon as a pipe held by this process closes, which happens however this process ends.
 * Used by TestingServer for ZooKeeper servers and by the interop tests for Curator peers.
 *
 * @example
 * ```ts
 * const { child, pid } = spawnGuardedJvm({ java: 'java', classpath, mainClass: 'Main', stdio: 'pipe' });
 * child.stdout?.on('data', (chunk) => ...);
 * process.kill(await pid, 'SIGSTOP');
 * ```
 */
export function spawnGuardedJvm(options: GuardedJvmOptions): GuardedJvm {
  const stdio = options.stdio ?? 'log';
  if (stdio !== 'log' && stdio !== 'pipe') throw new Error(`stdio must be 'log' or 'pipe', got ${String(stdio)}`);
  if (stdio === 'log' && !options.logFile) throw new Error("stdio 'log' needs a logFile");
  const command = [options.java, ...(options.jvmOptions ?? []), '-cp', options.classpath, options.mainClass, ...(options.args ?? [])];
  const child = spawn('bash', ['-c', WRAPPER, options.name ?? 'jvm', stdio, options.logFile ?? '', ...command], {
    stdio: stdio === 'log' ? ['pipe', 'pipe', 'ignore'] : ['pipe', 'pipe', options.logFile ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    env: options.env ?? process.env,
  });
  // The lifeline: never written, only held open. Its end must not crash us when the shell is gone.
  const lifeline = (stdio === 'log' ? child.stdin : child.stdio[3]) as Writable | null;
  lifeline?.on('error', () => undefined);
  if (stdio === 'pipe') child.stdin?.on('error', () => undefined);
  const pidStream = (stdio === 'log' ? child.stdout : child.stdio[4]) as Readable | null;
  const pid = new Promise<number>((resolve, reject) => {
    let text = '';
    pidStream?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const nl = text.indexOf('\n');
      if (nl >= 0) resolve(Number(text.slice(0, nl)));
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`the JVM wrapper ended before the JVM started (${signal ?? code})`)));
  });
  pid.catch(() => undefined);
  child.once('exit', () => lifeline?.destroy());
  return { child, pid };
}
