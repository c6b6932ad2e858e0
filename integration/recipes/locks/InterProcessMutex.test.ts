import { InterProcessMutex } from '../../../recipes/locks';
import { isZkError } from '../../../src';
import { describeLockContract } from './lockContract';

describeLockContract('InterProcessMutex', {
  make: (client, path) => new InterProcessMutex(client, path),
  reentrant: true,
  nodes: async (client, path) => {
    try {
      return await client.getChildren(path);
    } catch (err) {
      if (isZkError(err, 'NONODE')) return [];
      throw err;
    }
  },
});
