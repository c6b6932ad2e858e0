import { InterProcessSemaphoreMutex } from '../../../recipes/locks';
import { childrenOf } from '../../helpers';
import { describeLockContract } from './lockContract';

describeLockContract('InterProcessSemaphoreMutex', {
  make: (client, path) => new InterProcessSemaphoreMutex(client, path),
  reentrant: false,
  // Both the queue (the internal mutex under locks/) and the holders (leases/).
  nodes: async (client, path) => [
    ...(await childrenOf(client, `${path}/locks`)).map((c) => `locks/${c}`),
    ...(await childrenOf(client, `${path}/leases`)).map((c) => `leases/${c}`),
  ],
});
