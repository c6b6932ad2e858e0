import debug from 'debug';
import type { ZkClient } from './ZkClient';

const log = debug('zk-recipes:client:background');

/**
 * Deletes a node of ours that must go (a lock node, a lease, a latch node), guaranteed: while
 * connected, resolves once the server confirms the delete, or when `within` aborts; while
 * disconnected, at once. Either way a delete that did not complete goes on in the background
 * (retried until done or the session ends, which takes an ephemeral node with it). Never rejects.
 */
export async function deleteOwnNode(client: ZkClient, node: string, within?: AbortSignal): Promise<void> {
  const signal = client.isConnected ? within : AbortSignal.abort();
  try {
    await client.delete(node, { guaranteed: true, quietly: true, signal });
  } catch (err) {
    log('deleting %s left to the background: %s', node, String(err));
  }
}
