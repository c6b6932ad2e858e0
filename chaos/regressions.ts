/**
 * The bugs the chaos suite found, each with the schedule that showed it and the deterministic
 * test that now guards it. `npm run chaos:regressions` replays every schedule (one after the
 * other, about a minute each) and fails when any shows a violation again. The schedules depend on
 * timing, so a replay may pass without reaching the bug's window: the deterministic tests are the
 * ones CI relies on; the replays are for a machine that has the time.
 */
import { spawnSync } from 'node:child_process';

export interface Regression {
  readonly bug: string;
  /** Options of `npm run chaos --`. */
  readonly args: readonly string[];
  /** The test that fails without the fix. */
  readonly test: string;
}

export const REGRESSIONS: readonly Regression[] = [
  {
    bug: 'a queue lock node left behind when its create was retried into a new session and the item was gone',
    args: ['--quick', '--seed', '71', '--faults', 'expire-session'],
    test: 'integration/recipes/queue/queueFaults.test.ts: a lock-safe claim whose lock create is retried into a new session…',
  },
  {
    bug: 'a queue lock node left behind after a worker froze past its session',
    args: ['--quick', '--seed', '4', '--faults', 'pause-worker'],
    test: 'integration/recipes/queue/queueFaults.test.ts: a lock-safe claim whose lock create is retried into a new session…',
  },
  {
    bug: 'a semaphore lease handed out already lost (a drop while the internal mutex was released)',
    args: ['--duration', '180', '--seed', '11'],
    test: 'integration/recipes/locks/lostOnWin.test.ts',
  },
  {
    bug: 'acquire({ timeoutMs }) ending only after a reconnect, past its bound',
    args: ['--duration', '180', '--seed', '11', '--faults', 'cut-worker'],
    test: 'integration/recipes/locks/timeLimits.test.ts',
  },
  {
    bug: 'expireSession aborting its process (the native close)',
    args: ['--quick', '--seed', '1601', '--faults', 'expire-session'],
    test: 'integration/testing/faults.test.ts, integration/recipes/leader/LeaderLatch.test.ts (RECONNECTED … after LOST)',
  },
  {
    bug: 'acquire({ timeoutMs }) ending at the read timeout, past its bound: the wait awaited the removal of its watch from a silent server (protocol transport)',
    args: ['--duration', '180', '--seed', '2211', '--transport', 'protocol', '--faults', 'pause-server'],
    test: 'integration/recipes/locks/timeLimits.test.ts: a waiter cut off while it waits…',
  },
  {
    bug: 'a semaphore lease handed out to a worker frozen past its session while it waited (the deletion event read before any timer ran)',
    args: ['--duration', '240', '--seed', '2211', '--transport', 'native', '--faults', 'pause-worker'],
    test: 'integration/client/stall.test.ts',
  },
  {
    bug: 'a session answered SESSIONEXPIRED on a connection that stayed up, kept for 30 s (native transport)',
    args: ['--duration', '600', '--seed', '2212', '--transport', 'native'],
    test: 'src/client/ZkClient.test.ts: an operation answered SESSIONEXPIRED on a connection that stays up…',
  },
  {
    bug: 'a worker waiting 50 s for a register reply that sat unread in its socket: the native binding, reconnecting after the worker was thawed, dropped a descriptor number that a new socket of the worker had taken (native transport; the binding, not the recipes)',
    args: ['--quick', '--seed', '6104', '--transport', 'native'],
    test: 'chaos/registerClient.test.ts: the register client keeps to the one connection it opened before the ZooKeeper handle (the defect itself: chaos/socketProbe.ts)',
  },
];

if (require.main === module) {
  const transport = process.argv.includes('--transport') ? ['--transport', process.argv[process.argv.indexOf('--transport') + 1]] : [];
  let failed = 0;
  for (const r of REGRESSIONS) {
    process.stderr.write(`[chaos:regressions] ${r.bug}\n  npm run chaos -- ${[...r.args, ...transport].join(' ')}\n`);
    const run = spawnSync('node', ['-r', 'ts-node/register/transpile-only', 'chaos/run.ts', ...r.args, ...transport], { stdio: ['ignore', 'ignore', 'inherit'] });
    if (run.status !== 0) {
      failed++;
      process.stderr.write(`[chaos:regressions] violations again (exit ${run.status}); its test: ${r.test}\n`);
    }
  }
  process.exit(failed > 0 ? 1 : 0);
}
