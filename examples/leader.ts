/**
 * Leader election with failover.
 *
 * Three candidate processes run a LeaderLatch on one path; this process watches who leads with
 * observeLeader. The leader is killed with SIGKILL, as in a crash: the next candidate takes over
 * once ZooKeeper expires the dead process's session, one session timeout later (3 s here; 60 s
 * with the default). Then the new leader is stopped with SIGTERM: it closes its latch and its
 * client, its node goes at once, and the last candidate takes over within milliseconds.
 *
 *   npm run example -- leader
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { LeaderLatch, ZkClient, observeLeader, type LeaderInfo } from 'zk-recipes';
import { TestingServer } from 'zk-recipes/testing';

const PATH = '/examples/leader';

/**
 * Ctrl-C or SIGTERM at any moment: the observer stops, the candidates are stopped with SIGTERM
 * (each closes its latch, so its node goes at once), and the server stops.
 */
const shutdown = new AbortController();
const { signal } = shutdown;

interface PromiseWithResolversLike {
  promise: Promise<void>;
  resolve: () => void;
}
/** Failover after a crash takes this long; short for the example (see the README on choosing it). */
const SESSION_TIMEOUT_MS = 3_000;

/** Set once SIGTERM or SIGINT asked this candidate to stop: a wait that the close ends is no failure then. */
let stopping = false;

/** A candidate: leads while it can, and leaves cleanly on SIGTERM. */
async function candidate(connectString: string, name: string): Promise<void> {
  const client = new ZkClient({ connectString, sessionTimeoutMs: SESSION_TIMEOUT_MS, id: name });
  const latch = new LeaderLatch(client, PATH, { id: name });
  // Closing the latch deletes its node now, so the next candidate leads at once; without it, the
  // others wait for the session to expire. Close on SIGTERM (and SIGINT) in every service.
  const stop = async () => {
    stopping = true;
    await latch.close();
    await client.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  latch.on('isLeader', () => {
    console.log(`  ${name}: I lead`);
    process.send?.('leading');
  });
  latch.on('notLeader', () => console.log(`  ${name}: I no longer lead`));
  client.start();
  await client.blockUntilConnected({ timeoutMs: 10_000 });
  latch.start();
}

async function main(): Promise<void> {
  for (const name of ['SIGINT', 'SIGTERM'] as const) process.once(name, () => shutdown.abort());
  console.log('starting a ZooKeeper server');
  const server = await TestingServer.start();
  const candidates = new Map<string, ChildProcess>();
  const observer = new ZkClient({ connectString: server.connectString });
  const stopObserving = new AbortController();
  try {
    observer.start();
    await observer.blockUntilConnected({ timeoutMs: 10_000, signal });
    // An abort listener added after the abort would never hear it.
    signal.throwIfAborted();
    signal.addEventListener('abort', () => stopObserving.abort(signal.reason), { once: true });
    const leaders = observeLeader(observer, PATH, { signal: stopObserving.signal });
    /** Per candidate: resolved once it says it leads. */
    const said = new Map<ChildProcess, PromiseWithResolversLike>();
    // The next leader, as the observer sees it and as the candidate itself says (so that its
    // lines come before ours).
    const nextLeader = async (): Promise<LeaderInfo> => {
      for (;;) {
        const { value } = await leaders.next();
        if (!value) continue;
        const child = candidates.get(value.id);
        if (child) await said.get(child)?.promise;
        return value;
      }
    };

    for (const name of ['candidate-1', 'candidate-2', 'candidate-3']) {
      const child = fork(__filename, ['candidate', server.connectString, name]);
      candidates.set(name, child);
      let resolve!: () => void;
      said.set(child, { promise: new Promise<void>((r) => (resolve = r)), resolve });
      child.on('message', () => said.get(child)?.resolve());
    }
    const first = await nextLeader();
    console.log(`${first.id} leads`);

    console.log(`killing ${first.id} (SIGKILL, as in a crash)`);
    let startedAt = performance.now();
    candidates.get(first.id)?.kill('SIGKILL');
    const second = await nextLeader();
    const crashMs = performance.now() - startedAt;
    console.log(`${second.id} leads, ${Math.round(crashMs)} ms later: the dead leader's session had to expire`);

    console.log(`stopping ${second.id} (SIGTERM: it closes its latch)`);
    startedAt = performance.now();
    candidates.get(second.id)?.kill('SIGTERM');
    const third = await nextLeader();
    const cleanMs = performance.now() - startedAt;
    console.log(`${third.id} leads, ${Math.round(cleanMs)} ms later`);

    if (new Set([first.id, second.id, third.id]).size !== 3) throw new Error('a candidate led twice');
    if (cleanMs >= crashMs) throw new Error('a clean stop should hand over faster than a crash');
    console.log(`ok: failover took ${Math.round(crashMs)} ms after a crash, ${Math.round(cleanMs)} ms after a clean stop`);
  } finally {
    stopObserving.abort();
    for (const child of candidates.values()) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    }
    await observer.close();
    await server.close();
  }
}

if (process.argv[2] === 'candidate') {
  candidate(process.argv[3], process.argv[4]).catch((err: unknown) => {
    // Stopped while it was still connecting: the close rejected that wait, and the stop handler
    // ends the process.
    if (stopping) return;
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err: unknown) => {
    // Whatever a wait rejected with when the signal came, the shutdown was asked for: no stack.
    if (signal.aborted) {
      console.log('stopped');
      return;
    }
    console.error(err);
    process.exitCode = 1;
  });
}
