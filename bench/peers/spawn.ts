import { spawn, type ChildProcess } from 'node:child_process';

/**
 * The ZooKeeper C client opens its sockets without close-on-exec, so a child process would inherit
 * the sessions of this process (see src/testing/spawnJvm.ts). Every child of the benchmark starts
 * under a shell that first closes every descriptor beyond stdin, stdout and stderr.
 */
const CLOSE_INHERITED = 'for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && [ -e "/proc/$$/fd/$fd" ] && eval "exec $fd>&-"; done';

/**
 * Runs `command` with piped stdin, stdout and stderr and no inherited descriptors. The command must
 * end when its stdin closes (the drivers do), so it cannot outlive this process.
 */
export function spawnPiped(command: string, args: readonly string[], name: string): ChildProcess {
  return spawn('bash', ['-c', `${CLOSE_INHERITED}\nexec "$@"`, name, command, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
}

/**
 * Runs a server that does not read its stdin (redis-server) in the background, killed as soon as
 * our end of the wrapper's stdin closes, which happens however this process ends. Its output goes
 * to the wrapper's stderr.
 */
export function spawnDaemon(command: string, args: readonly string[], name: string): ChildProcess {
  const script = [CLOSE_INHERITED, '"$@" </dev/null >&2 &', 'j=$!', 'cat >/dev/null', 'kill -9 "$j" 2>/dev/null', 'wait "$j"'].join('\n');
  const child = spawn('bash', ['-c', script, name, command, ...args], { stdio: ['pipe', 'ignore', 'pipe'] });
  child.stdin?.on('error', () => undefined);
  return child;
}
