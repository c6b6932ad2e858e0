/**
 * A real server's replies mutated at random on their way to one client (bytes flipped, chunks cut,
 * chunks sent twice), through a FaultProxy: the client drops the connections that went wrong and
 * carries on in its session, every call settles within its signal's time, and a lock waiter is
 * never woken while its holder holds. The bytes a client can only take on trust (the answer to the
 * handshake, a reply's zxid) are spared: any value of them is valid (see the README's fault
 * section). Both transports; the native one with cut chunks only (see KINDS).
 */
import { mutateReplies, type MutationKind } from '../../chaos/frames';
import type { ZkClient } from '../../src';
import { InterProcessMutex } from '../../recipes/locks';
import { StateRecorder, TEST_TRANSPORT, eventually, randomRoot, timing } from '../helpers';
import { useZooKeeper } from '../fixture';

/**
 * The native transport's C client aborts the process on a reply that answers no request (an
 * `assert(cptr)` in zookeeper_process), which a chunk sent twice or a flipped xid gives: it gets
 * cut chunks only. The protocol transport gets all three kinds.
 */
const KINDS: readonly MutationKind[] = TEST_TRANSPORT === 'native' ? ['truncate'] : ['flip', 'truncate', 'duplicate'];

/** Each call under mutation carries a signal of this many ms. */
const CALL_LIMIT_MS = 2_000;
/** What a loaded machine may add to a call's limit before the call has settled: timers run late. */
const LATE_MARGIN_MS = timing(3_000);

/** Runs `round` again and again until `enough` says so, or `limitMs` have passed. */
async function keepGoing(enough: () => boolean, limitMs: number, round: (n: number) => Promise<void>): Promise<void> {
  const until = performance.now() + limitMs;
  for (let n = 0; !enough() && performance.now() < until; n++) await round(n);
}

/** How many chunks a mutation changed. */
function changed(counts: { flip: number; truncate: number; duplicate: number }): number {
  return counts.flip + counts.truncate + counts.duplicate;
}

/** Settles `call`, and says how long it took. */
async function timed(call: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await call().catch(() => undefined);
  return performance.now() - started;
}

describe('replies mutated on their way from the server', () => {
  const zk = useZooKeeper({ proxy: 'each' });
  let admin: ZkClient;
  let root: string;

  beforeEach(async () => {
    admin = await zk.clients.connect({ connectString: zk.server.connectString });
    root = randomRoot('mutate');
    await admin.create(`${root}/data`, { data: 'v0', createParents: 'persistent' });
  });

  it('the client keeps its session, every call settles within its time, and it reads and writes normally once healed', async () => {
    const client = await zk.clients.connect({ connectString: zk.proxy.connectString, sessionTimeoutMs: 10_000 });
    const session = client.sessionId;
    const states = new StateRecorder(client);
    const mutation = mutateReplies({ seed: 2511, rate: 0.2, kinds: KINDS, spareTrusted: true });
    const heal = zk.proxy.intercept(mutation.interceptor);
    let slowest = 0;
    let settled = 0;
    await keepGoing(() => changed(mutation.counts) >= 30, timing(90_000), async (n) => {
      const signal = AbortSignal.timeout(CALL_LIMIT_MS);
      const took = await Promise.all([
        timed(() => client.getData(`${root}/data`, { signal, watcher: () => undefined })),
        timed(() => client.setData(`${root}/data`, `v${n}`, { signal })),
        timed(() => client.getChildren(root, { signal, watcher: () => undefined })),
        timed(() => client.exists(`${root}/gone-${n}`, { signal })),
      ]);
      settled += took.length;
      slowest = Math.max(slowest, ...took);
    });
    heal();
    expect(changed(mutation.counts)).toBeGreaterThanOrEqual(30);
    // The mutations broke connections, and none of them outlived the session.
    expect(states.states).toContain('RECONNECTED');
    expect(states.states).not.toContain('LOST');
    expect(slowest).toBeLessThan(CALL_LIMIT_MS + LATE_MARGIN_MS);
    expect(settled).toBeGreaterThanOrEqual(40);
    // Healed: reads and writes as before, in the same session.
    await client.setData(`${root}/data`, 'after', { signal: AbortSignal.timeout(timing(30_000)) });
    expect((await client.getData(`${root}/data`)).data.toString()).toBe('after');
    expect((await admin.getData(`${root}/data`)).data.toString()).toBe('after');
    expect(client.sessionId).toBe(session);
  }, timing(240_000));

  it('a lock waiter is not woken while its holder holds, whatever comes through, and takes the lock once released', async () => {
    const path = `${root}/lock`;
    const busy = `${root}/busy`;
    await admin.create(busy, { data: '0' });
    const waiterClient = await zk.clients.connect({ connectString: zk.proxy.connectString, sessionTimeoutMs: 10_000 });
    const session = waiterClient.sessionId;
    const held = await new InterProcessMutex(admin, path).acquire({ timeoutMs: timing(20_000) });
    /** Whether the holder's node was still there when the waiter took the lock. */
    let holderThereAtWin: boolean | undefined;
    const waiting = new InterProcessMutex(waiterClient, path).acquire({ timeoutMs: timing(120_000) }).then(async (lease) => {
      holderThereAtWin = (await admin.exists(held.node)) !== null;
      return lease;
    });
    await eventually('the waiter in line', async () => (await admin.getChildren(path)).length === 2);
    const mutation = mutateReplies({ seed: 2512, rate: 0.2, kinds: KINDS, spareTrusted: true });
    const heal = zk.proxy.intercept(mutation.interceptor);
    // Events and replies keep coming to the waiter's client meanwhile: the busy node changes, and
    // its children come and go, each watched again.
    await keepGoing(() => changed(mutation.counts) >= 40, timing(90_000), async (n) => {
      const signal = AbortSignal.timeout(CALL_LIMIT_MS);
      await Promise.all([
        waiterClient.getData(busy, { signal, watcher: () => undefined }).catch(() => undefined),
        waiterClient.getChildren(busy, { signal, watcher: () => undefined }).catch(() => undefined),
        admin.setData(busy, String(n)),
        n % 2 === 0 ? admin.create(`${busy}/c-${n}`, { mode: 'EPHEMERAL' }) : admin.delete(`${busy}/c-${n - 1}`),
      ]);
    });
    heal();
    expect(changed(mutation.counts)).toBeGreaterThanOrEqual(40);
    // The holder still holds: its node is there, and the waiter has not taken the lock.
    expect(await admin.exists(held.node)).not.toBeNull();
    expect(holderThereAtWin).toBeUndefined();
    // A request answered after healing: the waiter has caught up on anything that came before it.
    await waiterClient.exists(path, { signal: AbortSignal.timeout(timing(30_000)) });
    expect(holderThereAtWin).toBeUndefined();
    await held.release();
    const lease = await waiting;
    expect(holderThereAtWin).toBe(false);
    expect(waiterClient.sessionId).toBe(session);
    await lease.release();
  }, timing(240_000));
});
