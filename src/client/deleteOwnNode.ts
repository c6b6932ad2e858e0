import debug from 'debug';
import { FixedDelayTimers } from '../util/timers';
import type { ZkClient } from './ZkClient';

const log = debug('zk-recipes:client:background');

/**
 * Deletes a node of ours that must go (a lock node, a lease, a latch node), guaranteed: while
 * connected, resolves once the server confirms the delete, or when `within` aborts; while
 * disconnected, at once. Either way a delete that did not complete goes on in the background
 * (retried until done or the session ends, which takes an ephemeral node with it). Never rejects.
 * `node` is a path a create of this client returned: that create checked it (see
 * `ZkClient.deleteCreated`).
 */
export function deleteOwnNode(client: ZkClient, node: string, within?: AbortSignal): Promise<void> {
  return deleteThen(client, node, within, noop);
}

/** The delete of `deleteOwnNode`, then `done` either way (a failure logged): one reaction, for the path every release takes. */
function deleteThen(client: ZkClient, node: string, within: AbortSignal | undefined, done: () => void): Promise<void> {
  const signal = client.isConnected ? within : AbortSignal.abort();
  return client.deleteCreated(node, signal).then(done, (err: unknown) => {
    log('deleting %s left to the background: %s', node, String(err));
    done();
  });
}

function noop(): void {}

/** The release bounds in use, one shared timer per delay. */
const bounds = new Map<number, FixedDelayTimers>();

function boundOf(waitMs: number): FixedDelayTimers {
  let timers = bounds.get(waitMs);
  if (timers === undefined) bounds.set(waitMs, (timers = new FixedDelayTimers(waitMs)));
  return timers;
}

/**
 * `deleteOwnNode`, waiting for the server at most `waitMs`: resolves by then whatever the network
 * does, and the delete goes on (under the retry policy, then in the background) if it has not
 * landed. A release runs this on every hold, so the bound is an entry in a timer shared by every
 * bound of this length (see FixedDelayTimers): no timer of its own, and no signal that every
 * request would listen to. Never rejects.
 */
export function deleteOwnNodeWithin(client: ZkClient, node: string, waitMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const bound = { cancel: noop };
    // The delete is written first, the bound's entry after it.
    void deleteThen(client, node, undefined, () => {
      bound.cancel();
      resolve();
    });
    bound.cancel = boundOf(waitMs).start(resolve);
  });
}
