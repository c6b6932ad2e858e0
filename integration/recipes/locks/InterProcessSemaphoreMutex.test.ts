import { InterProcessSemaphoreMutex } from '../../../recipes/locks';
import { isZkError, type ZkClient } from '../../../src';
import { describeLockContract } from './lockContract';

/** Children of a node, none when it is missing (an emptied container is reaped by the server). */
async function childrenOf(client: ZkClient, path: string): Promise<string[]> {
  try {
    return await client.getChildren(path);
  } catch (err) {
    if (isZkError(err, 'NONODE')) return [];
    throw err;
  }
}

describeLockContract('InterProcessSemaphoreMutex', {
  make: (client, path) => new InterProcessSemaphoreMutex(client, path),
  reentrant: false,
  // Both the queue (the internal mutex under locks/) and the holders (leases/).
  nodes: async (client, path) => [
    ...(await childrenOf(client, `${path}/locks`)).map((c) => `locks/${c}`),
    ...(await childrenOf(client, `${path}/leases`)).map((c) => `leases/${c}`),
  ],
});
