/**
 * A process that stalls (SIGSTOP, a long GC pause, a blocked event loop) reads, once it runs
 * again, what the server sent before it expired the session, before any timer can tell it so.
 * `isConnectionTrusted` says no for such a moment, and a lock won in it is not handed out.
 */
import { timing } from '../helpers';
import { useZooKeeper } from '../fixture';

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

  it('does not trust its connection right after a stall of a third of the session timeout, and does again once its event loop runs', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString, sessionTimeoutMs: 3_000 });
    expect(client.isConnectionTrusted).toBe(true);
    let rightAfter: boolean | undefined;
    let connectedRightAfter: boolean | undefined;
    await stallFor(1_500, () => {
      rightAfter = client.isConnectionTrusted;
      connectedRightAfter = client.isConnected;
    });
    // Connected as far as the client knows, but not to be trusted.
    expect(connectedRightAfter).toBe(true);
    expect(rightAfter).toBe(false);
    // The detector's timer runs again within a few of its 100 ms periods.
    const deadline = Date.now() + timing(2_000);
    while (!client.isConnectionTrusted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(client.isConnectionTrusted).toBe(true);
    // The session lived through it (1.5 s < 3 s): a read still works.
    await expect(client.exists('/')).resolves.not.toBeNull();
  });

  it('a stall shorter than a third of the session timeout keeps the connection trusted', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString, sessionTimeoutMs: 9_000 });
    let rightAfter: boolean | undefined;
    await stallFor(1_000, () => (rightAfter = client.isConnectionTrusted));
    expect(rightAfter).toBe(true);
  });
});
