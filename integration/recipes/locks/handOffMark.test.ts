/**
 * The mutex's hand-off mark (recipes/locks/handOffMark.ts): a holder that waited, and still holds
 * once the turn it won in is over, writes its node's data again at version 0; the waiter just
 * behind it then takes the lock on that node's deletion, with no listing, though other nodes were
 * ahead of it when it joined. Any other write to the node is no mark: the waiter lists, and waits
 * for whoever still holds. Within one process a holder tells the waiter behind it instead (see
 * localHandOff.test.ts): here that is turned off, each session standing for a process of its own.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { InterProcessMutex, REVOKE_MESSAGE } from '../../../recipes/locks';
import { handOffsWithinProcess } from '../../../recipes/locks/localHandOff';
import { METRICS_CHANNELS, type OperationEvent } from '../../../src/metrics';
import type { ZkClient } from '../../../src';
import { aborted, eventually, isWatching, randomRoot, settledYet, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { lineOfThree as lineOfThreeOn } from './lineOfThree';
import { InstrumentedTransports } from '../../instrumentedTransports';

/** Two turns of the event loop: a mark due after the turn a lock was won in has been sent by then. */
async function twoTurns(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

describe('mutex hand-off mark', () => {
  const zk = useZooKeeper();
  // The mark is for a waiter in another process: this one's sessions stand in for three processes.
  beforeAll(() => handOffsWithinProcess(false));
  afterAll(() => handOffsWithinProcess(true));
  const connect = (options: { transportFactory?: InstrumentedTransports['factory'] } = {}): Promise<ZkClient> =>
    zk.clients.connect({ connectString: zk.server.connectString, ...options });

  type ConnectOptions = { transportFactory?: InstrumentedTransports['factory'] };
  const lineOfThree = (path: string, secondSignal?: AbortSignal, thirdOptions?: ConnectOptions) =>
    lineOfThreeOn(zk.server, connect, path, { secondSignal, thirdOptions });

  it('a holder that waited marks its node; the waiter behind it holds on its deletion, with no listing', async () => {
    const root = randomRoot('mark');
    const path = `${root}/lock`;
    const { a, c, first, second, third, nodes } = await lineOfThree(path);
    const before = await a.getData(nodes[1]);
    expect(before.stat.version).toBe(0);
    await first.release();
    const held = await second;

    // The mark: the node's data written again, unchanged. The waiter behind reads it, and then
    // watches its own node (what lets it claim on the event alone).
    const marked = await eventually('the mark', async () => {
      const read = await a.getData(nodes[1]);
      return read.stat.version === 1 ? read : undefined;
    });
    expect(marked.data).toEqual(before.data);
    await eventually('the third to watch its own node', () => isWatching(zk.server, nodes[2], c.sessionId));

    const listings: string[] = [];
    const onOperation = (message: unknown) => {
      const event = message as OperationEvent;
      if (event.operation === 'getChildren' && event.path.startsWith(`${root}/`)) listings.push(event.path);
    };
    subscribe(METRICS_CHANNELS.operation, onOperation);
    try {
      await held.release();
      const lease = await third;
      expect(listings).toEqual([]);
      expect(lease.node).toBe(nodes[2]);
      expect(lease.fencingToken).toBeGreaterThan(held.fencingToken);
      await lease.release();
    } finally {
      unsubscribe(METRICS_CHANNELS.operation, onOperation);
    }
  });

  it('the waiter behind starts its own node’s watch on the change, before its read shows the mark', async () => {
    const path = `${randomRoot('mark')}/lock`;
    const traced = new InstrumentedTransports();
    const { c, first, second, third, nodes } = await lineOfThree(path, undefined, { transportFactory: traced.factory });
    // The third's read of the second's node after the mark's change: its answer is held back.
    const reread = traced.holdNext('getData', nodes[1]);
    await first.release();
    const held = await second;
    await reread.reached;
    // The own node's watch was set beside that read, not after its answer.
    await eventually('the third to watch its own node', () => isWatching(zk.server, nodes[2], c.sessionId));
    expect(await settledYet(third)).toBe(false);
    reread.release();
    await eventually('the third to watch the second again', () => isWatching(zk.server, nodes[1], c.sessionId));
    await held.release();
    const lease = await third;
    expect(lease.node).toBe(nodes[2]);
    await lease.release();
  });

  it('the holder lets its own node’s watch go before its mark, unless asked for the signal first', async () => {
    const path = `${randomRoot('mark')}/lock`;
    const { b, c, first, second, third, nodes } = await lineOfThree(path);
    await first.release();
    const held = await second;
    // Its watch came from its wait: after the mark, nothing of b's watches the node.
    await eventually('the mark', async () => (await b.exists(nodes[1]))?.version === 1);
    await eventually('the third to watch the second again', () => isWatching(zk.server, nodes[1], c.sessionId));
    expect(await isWatching(zk.server, nodes[1], b.sessionId)).toBe(false);
    // Asked for now, the signal watches the node anew: its deletion by another aborts it.
    const signal = held.signal;
    await eventually('the holder to watch its node again', () => isWatching(zk.server, nodes[1], b.sessionId));
    const lost = aborted(signal);
    await c.delete(nodes[1]);
    await expect(lost).resolves.toMatchObject({ name: 'LockLostError', reason: 'NODE_DELETED' });
    const lease = await third;
    await lease.release();
    await held.release();
  });

  it('the holder asked for the signal before its mark keeps its own node’s watch through it', async () => {
    const path = `${randomRoot('mark')}/lock`;
    const { b, c, first, second, third, nodes } = await lineOfThree(path);
    await first.release();
    const held = await second;
    // Asked in the turn the lock was won, before the mark.
    const signal = held.signal;
    const lost = aborted(signal);
    await eventually('the mark', async () => (await b.exists(nodes[1]))?.version === 1);
    // Read again after the mark's event, the watch is set again.
    await eventually('the holder to watch its node again', () => isWatching(zk.server, nodes[1], b.sessionId));
    expect(signal.aborted).toBe(false);
    await c.delete(nodes[1]);
    await expect(lost).resolves.toMatchObject({ name: 'LockLostError', reason: 'NODE_DELETED' });
    await (await third).release();
    await held.release();
  });

  it.each([
    ['Curator’s revocation message', REVOKE_MESSAGE],
    ['other bytes', 'not a mark'],
  ])('a write of %s to a waiting node is no mark: the waiter behind it waits for the holder', async (_what, data) => {
    const path = `${randomRoot('mark')}/lock`;
    const giveUp = new AbortController();
    const { a, c, first, second, third, nodes } = await lineOfThree(path, giveUp.signal);
    await a.setData(nodes[1], data);
    // The write fires the third's watch before setData returns: a watch seen now is its read again.
    await eventually('the third to read the second again', () => isWatching(zk.server, nodes[1], c.sessionId));

    // The second gives up, never having held: its node goes.
    giveUp.abort(new Error('giving up'));
    await expect(second).rejects.toThrow('giving up');
    await eventually('the third to watch the holder', () => isWatching(zk.server, first.node, c.sessionId));
    expect(await settledYet(third)).toBe(false);

    await first.release();
    const lease = await third;
    expect(lease.fencingToken).toBeGreaterThan(first.fencingToken);
    await lease.release();
  });

  it('is not written by a holder that did not wait, nor by one that releases in the turn it won', async () => {
    const path = `${randomRoot('mark')}/lock`;
    const traced = new InstrumentedTransports();
    const [a, b] = [await connect(), await connect({ transportFactory: traced.factory })];

    // Uncontended, held past its turn.
    const alone = await new InterProcessMutex(b, path).acquire({ timeoutMs: timing(10_000) });
    await twoTurns();
    expect((await a.getData(alone.node)).stat.version).toBe(0);
    await alone.release();

    // Waited, and released at once: in the turn it was won, as the lease comes.
    const first = await new InterProcessMutex(a, path).acquire({ timeoutMs: timing(10_000) });
    const waited = new InterProcessMutex(b, path).acquire({ timeoutMs: timing(20_000) }).then((lease) => lease.release());
    await eventually('the waiter to watch the holder', () => isWatching(zk.server, first.node, b.sessionId));
    await first.release();
    await waited;
    await twoTurns();
    expect(traced.calls.filter((call) => call.startsWith('setData '))).toEqual([]);
  });
});
