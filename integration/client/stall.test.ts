/**
 * A process that stalls (SIGSTOP, a long GC pause, a blocked event loop) reads, once it runs
 * again, what the server sent before it expired the session, before any timer can tell it so.
 * `isConnectionTrusted` says no for such a moment, and a lock won in it is not handed out.
 */
import { LeaderLatch } from '../../recipes/leader';
import { InterProcessMutex } from '../../recipes/locks';
import { eventually, randomRoot, timing } from '../helpers';
import { useZooKeeper } from '../fixture';
import { InstrumentedTransports } from '../instrumentedTransports';

/** Blocks the event loop for `ms`, from inside a timer callback (libuv then polls I/O before it runs timers again). */
function stallFor(ms: number, then: () => void): Promise<void> {
  return new Promise((resolve) =>
    setTimeout(() => {
      const until = performance.now() + ms;
      while (performance.now() < until) {
        // A stalled process.
      }
      then();
      resolve();
    }, 0),
  );
}

describe('a stalled process', () => {
  const zk = useZooKeeper();

  it('does not trust its connection after a stall of a third of the session timeout, until a request sent after it is answered', async () => {
    // A third of 9 s is 3 s: the 4 s stall below counts, and the session outlives it; a stall of
    // the loaded machine's own would have to last 3 s to count.
    const client = await zk.clients.connect({ connectString: zk.server.connectString, sessionTimeoutMs: 9_000 });
    await client.exists('/');
    expect(client.isConnectionTrusted).toBe(true);
    let rightAfter: boolean | undefined;
    let connectedRightAfter: boolean | undefined;
    await stallFor(4_000, () => {
      rightAfter = client.isConnectionTrusted;
      connectedRightAfter = client.isConnected;
    });
    // Connected as far as the client knows, but not to be trusted.
    expect(connectedRightAfter).toBe(true);
    expect(rightAfter).toBe(false);
    // The event loop runs again (the detector's 100 ms timer has run by the time a 250 ms one
    // does), but nothing has come from the server since: still not trusted. A recipe woken late
    // by what was read in the stall must not act on it.
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(client.isConnectionTrusted).toBe(false);
    // The session lived through it (4 s < 9 s): a read sent now is answered, and proves it.
    await expect(client.exists('/')).resolves.not.toBeNull();
    expect(client.isConnectionTrusted).toBe(true);
  });

  it('a stall shorter than a third of the session timeout keeps the connection trusted', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString, sessionTimeoutMs: 9_000 });
    let rightAfter: boolean | undefined;
    await stallFor(1_000, () => (rightAfter = client.isConnectionTrusted));
    expect(rightAfter).toBe(true);
  });

  it('a waiter woken by what it read in a stall reads again, in its session, before it takes the lock', async () => {
    const path = `${randomRoot('stall')}/lock`;
    const holderClient = await zk.clients.connect({ connectString: zk.server.connectString });
    const traced = new InstrumentedTransports();
    // A third of 9 s is 3 s: the 3.5 s stall below counts; the session outlives it.
    const waiterClient = await zk.clients.connect({ connectString: zk.server.connectString, sessionTimeoutMs: 9_000, transportFactory: traced.factory });
    const held = await new InterProcessMutex(holderClient, path).acquire({ timeoutMs: timing(20_000) });
    const waiting = new InterProcessMutex(waiterClient, path).acquire({ timeoutMs: timing(60_000) });
    // The waiter watches the holder's node: its deletion alone will settle the win.
    await eventually('the waiter watching the holder', () => traced.replies.some((r) => r === `exists ${held.node}` || r === `getData ${held.node}`));
    await stallFor(3_500, () => undefined);
    const afterStall = traced.calls.length;
    // The detector's timer has run since (a 250 ms timer fires after its 100 ms one): the stall is
    // over. The release's event then comes as news read after a stall would, from a session that
    // may have ended in it.
    await new Promise((resolve) => setTimeout(resolve, 250));
    await held.release();
    const lease = await waiting;
    const since = traced.calls.slice(afterStall);
    // Not taken on the event alone: a listing sent after the stall proved the session first; and
    // the waiter kept its place (no new node).
    expect(since).toContain(`getChildren ${path}`);
    expect(since.filter((call) => call.startsWith('create '))).toEqual([]);
    expect(lease.signal.aborted).toBe(false);
    await lease.release();
  });

  it('a latch woken by what it read in a stall reads again, in its session, before it leads', async () => {
    const path = `${randomRoot('stall')}/latch`;
    const traced = new InstrumentedTransports();
    const leader = new LeaderLatch(await zk.clients.connect({ connectString: zk.server.connectString }), path);
    const next = new LeaderLatch(await zk.clients.connect({ connectString: zk.server.connectString, sessionTimeoutMs: 9_000, transportFactory: traced.factory }), path);
    leader.start();
    await leader.await({ timeoutMs: timing(20_000) });
    next.start();
    // The second latch watches the leader's node: its deletion alone will settle the election.
    await eventually('the second latch watching the leader', () => traced.replies.some((r) => r === `exists ${leader.ourPath}` || r === `getData ${leader.ourPath}`));
    await stallFor(3_500, () => undefined);
    const afterStall = traced.calls.length;
    // As for the lock above: the stall is over when the leader's node goes.
    await new Promise((resolve) => setTimeout(resolve, 250));
    await leader.close();
    await next.await({ timeoutMs: timing(20_000) });
    const since = traced.calls.slice(afterStall);
    expect(since).toContain(`getChildren ${path}`);
    expect(since.filter((call) => call.startsWith('create '))).toEqual([]);
    await next.close();
  });
});
