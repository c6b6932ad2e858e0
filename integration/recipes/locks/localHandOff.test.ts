/**
 * The mutex's hand-off within one process (recipes/locks/localHandOff.ts): a holder that won in
 * this process tells the waiter of this process waiting on its node, which then takes the lock on
 * that node's deletion with no listing, though other nodes were ahead of it when it joined; the
 * holder writes no hand-off mark. A node ahead that goes without having held tells nothing: the
 * waiter lists, and waits for whoever still holds. Our own node's loss before the node ahead goes
 * is heard first, and the waiter starts again with a new node.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { InterProcessMutex, type Lease } from '../../../recipes/locks';
import { listenedNodes } from '../../../recipes/locks/localHandOff';
import { METRICS_CHANNELS, type OperationEvent } from '../../../src/metrics';
import type { ZkClient } from '../../../src';
import { eventually, isWatching, randomRoot, settledYet, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { lineOfThree as lineOfThreeOn } from './lineOfThree';

describe('mutex hand-off within one process', () => {
  const zk = useZooKeeper();
  const connect = (): Promise<ZkClient> => zk.clients.connect({ connectString: zk.server.connectString });

  const lineOfThree = (path: string, secondSignal?: AbortSignal) => lineOfThreeOn(zk.server, connect, path, { secondSignal });

  /** The operations of this process on paths under `root`, by name, while `body` runs. */
  async function operationsUnder(root: string, body: () => Promise<void>): Promise<string[]> {
    const seen: string[] = [];
    const onOperation = (message: unknown) => {
      const event = message as OperationEvent;
      if (event.path.startsWith(`${root}/`)) seen.push(`${event.operation} ${event.path}`);
    };
    subscribe(METRICS_CHANNELS.operation, onOperation);
    try {
      await body();
    } finally {
      unsubscribe(METRICS_CHANNELS.operation, onOperation);
    }
    return seen;
  }

  it('the waiter behind a holder of this process holds on its deletion with no listing, and the holder writes no mark', async () => {
    const root = randomRoot('local');
    const path = `${root}/lock`;
    const { c, first, second, third, nodes } = await lineOfThree(path);
    let held: Lease | undefined;
    let lease: Lease | undefined;
    const seen = await operationsUnder(root, async () => {
      await first.release();
      held = await second;
      // Told that the second holds, the third watches its own node: what lets it claim on the event alone.
      await eventually('the third to watch its own node', () => isWatching(zk.server, nodes[2], c.sessionId));
      await held.release();
      lease = await third;
    });
    expect(held?.node).toBe(nodes[1]);
    expect(lease?.node).toBe(nodes[2]);
    expect(lease?.fencingToken).toBeGreaterThan(held?.fencingToken ?? 0n);
    // No listing by the third, and no mark by the second (its node's data never written). The
    // third may mark its own node: it waited, and it holds past the turn it won in when this test
    // reads the second's delete reply after the third's event (a loaded machine does).
    expect(seen.filter((op) => op.startsWith('getChildren') || op === `setData ${nodes[1]}`)).toEqual([]);
    await lease?.release();
    expect(listenedNodes()).toBe(0);
  });

  it('a waiter whose node ahead starts to wait here only after it does watches its own node then, before the win', async () => {
    const root = randomRoot('local');
    const path = `${root}/lock`;
    const [a, b, c] = [await connect(), await connect(), await connect()];
    const first = await new InterProcessMutex(a, path).acquire({ timeoutMs: timing(10_000) });
    // The second's join answers only when the test says: its node stands on the server, but it
    // does not wait (stand in line here) until the third does.
    let letSecondGo!: () => void;
    const gate = new Promise<void>((resolve) => (letSecondGo = resolve));
    const createAndList = b.createAndListParent.bind(b);
    b.createAndListParent = async (...args) => {
      const created = await createAndList(...args);
      await gate;
      return created;
    };
    const second = new InterProcessMutex(b, path).acquire({ timeoutMs: timing(20_000) });
    second.catch(() => undefined);
    await eventually('the second node', async () => (await new InterProcessMutex(a, path).getParticipantNodes()).length === 2);
    const third = new InterProcessMutex(c, path).acquire({ timeoutMs: timing(20_000) });
    third.catch(() => undefined);
    const nodes = await eventually('three nodes', async () => {
      const all = await new InterProcessMutex(a, path).getParticipantNodes();
      return all.length === 3 ? all : undefined;
    });
    await eventually('the third to watch the second', () => isWatching(zk.server, nodes[1], c.sessionId));
    expect(await isWatching(zk.server, nodes[2], c.sessionId)).toBe(false);

    letSecondGo();
    await eventually('the second to watch the first', () => isWatching(zk.server, first.node, b.sessionId));
    // Told that the second now waits here, the third watches its own node, while the first holds.
    await eventually('the third to watch its own node', () => isWatching(zk.server, nodes[2], c.sessionId));
    expect(await settledYet(second)).toBe(false);
    let held: Lease | undefined;
    let lease: Lease | undefined;
    const seen = await operationsUnder(root, async () => {
      await first.release();
      held = await second;
      await held.release();
      lease = await third;
    });
    expect(held?.node).toBe(nodes[1]);
    expect(lease?.node).toBe(nodes[2]);
    // The hand-offs needed no listing, and the third no read of its own node after the win (it
    // may mark it, as above).
    expect(seen.filter((op) => op.startsWith('getChildren') || op === `getData ${nodes[2]}` || op === `exists ${nodes[2]}`)).toEqual([]);
    await lease?.release();
    expect(listenedNodes()).toBe(0);
  });

  it('a node ahead that gives up without holding tells nothing: the waiter lists, and waits for the holder', async () => {
    const root = randomRoot('local');
    const path = `${root}/lock`;
    const giveUp = new AbortController();
    const { c, first, second, third } = await lineOfThree(path, giveUp.signal);
    let lease: Lease | undefined;
    const seen = await operationsUnder(root, async () => {
      giveUp.abort(new Error('gave up'));
      await expect(second).rejects.toThrow('gave up');
      // The third lists, finds the first still there, and waits on it.
      await eventually('the third to watch the first', () => isWatching(zk.server, first.node, c.sessionId));
      expect(await settledYet(third)).toBe(false);
      await first.release();
      lease = await third;
    });
    expect(seen.filter((op) => op.startsWith('getChildren'))).not.toEqual([]);
    expect(lease?.fencingToken).toBeGreaterThan(first.fencingToken);
    await lease?.release();
    expect(listenedNodes()).toBe(0);
  });

  it('a waiter told the node ahead holds, whose own node goes first, starts again with a new node', async () => {
    const root = randomRoot('local');
    const path = `${root}/lock`;
    const { a, c, first, second, third, nodes } = await lineOfThree(path);
    await first.release();
    const held = await second;
    await eventually('the third to watch its own node', () => isWatching(zk.server, nodes[2], c.sessionId));
    // Someone deletes the third's node while the second holds: the deletion of the second's node
    // later must not make the third a holder with no node.
    await a.delete(nodes[2]);
    await eventually('the third to join again', async () => {
      const all = await new InterProcessMutex(a, path).getParticipantNodes();
      return all.length === 2 && all[0] === nodes[1] && all[1] !== nodes[2] ? all : undefined;
    });
    expect(await settledYet(third)).toBe(false);
    await held.release();
    const lease = await third;
    expect(lease.node).not.toBe(nodes[2]);
    expect(await c.exists(lease.node)).not.toBeNull();
    await lease.release();
    expect(listenedNodes()).toBe(0);
  });
});
