/**
 * The mutex's hand-off: a waiter whose node ahead is the last one takes the lock on that node's
 * deletion event, with no read (Curator lists the children again). Its token is its node's czxid:
 * the protocol transport has it from the create (create2); on the native binding the waiter reads
 * it while it waits, off the hand-off's path. The token is higher than the previous holder's.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { InterProcessMutex } from '../../../recipes/locks';
import { METRICS_CHANNELS, type OperationEvent } from '../../../src/metrics';
import { eventually, isWatching, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';

const READS: ReadonlySet<string> = new Set(['getData', 'getChildren', 'exists']);

describe('mutex hand-off', () => {
  const zk = useZooKeeper();

  it('the next waiter holds on the deletion event: with no read, and a higher token', async () => {
    const root = randomRoot('handoff');
    const path = `${root}/lock`;
    const holderClient = await zk.clients.connect({ connectString: zk.server.connectString });
    const waiterClient = await zk.clients.connect({ connectString: zk.server.connectString });
    const holder = await new InterProcessMutex(holderClient, path).acquire({ timeoutMs: timing(10_000) });
    const waiting = new InterProcessMutex(waiterClient, path).acquire({ timeoutMs: timing(20_000) });

    // The waiter is settled once the server holds its watch on the holder's node: then nothing it
    // does before the release is left in flight.
    await eventually('the waiter to watch the holder', () => isWatching(zk.server, holder.node, waiterClient.sessionId));

    // The channel is the process's: a client of a test file run before this one in the same worker
    // may still see a read settle (the native binding closes its handle once the server has
    // answered, which a loaded server may do after close() has given up waiting). Only this lock's
    // reads count.
    const reads: string[] = [];
    const onOperation = (message: unknown) => {
      const event = message as OperationEvent;
      if (READS.has(event.operation) && event.path.startsWith(`${root}/`)) reads.push(`${event.operation} ${event.path}`);
    };
    subscribe(METRICS_CHANNELS.operation, onOperation);
    try {
      await holder.release();
      const lease = await waiting;
      expect(reads).toEqual([]);
      expect(lease.fencingToken).toBeGreaterThan(holder.fencingToken);
      await lease.release();
    } finally {
      unsubscribe(METRICS_CHANNELS.operation, onOperation);
    }
  });
});
