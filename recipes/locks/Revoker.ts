import { isZkError, validatePath, type ZkClient } from '../../src/recipeKit';
import { REVOKE_MESSAGE } from './LockMonitor';

/**
 * Asks the holder of a revocable lock to release it, as Curator's Revoker: writes `__REVOKE__`
 * into the holder's node. The holder's revocation listener decides; revocation is cooperative.
 * A node that is already gone is fine.
 */
export const Revoker = Object.freeze({
  async attemptRevoke(client: ZkClient, nodePath: string): Promise<void> {
    validatePath(nodePath);
    try {
      await client.setData(nodePath, REVOKE_MESSAGE);
    } catch (err) {
      if (!isZkError(err, 'NONODE')) throw err;
    }
  },
});
