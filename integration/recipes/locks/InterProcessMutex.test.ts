import { InterProcessMutex } from '../../../recipes/locks';
import { childrenOf } from '../../helpers';
import { describeLockContract } from './lockContract';

describeLockContract('InterProcessMutex', {
  make: (client, path) => new InterProcessMutex(client, path),
  reentrant: 'lease',
  nodes: childrenOf,
});
