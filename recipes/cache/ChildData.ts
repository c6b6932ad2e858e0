import type { Stat } from '../../src/recipeKit';

/**
 * A node as a cache holds it (Curator's ChildData): its path (within the client's namespace), its
 * stat, and its data when the cache's filter keeps data for it (undefined otherwise).
 */
export interface ChildData {
  readonly path: string;
  readonly stat: Stat;
  readonly data: Buffer | undefined;
}

/** Whether two readings are the same node at the same change: the same czxid (not re-created) and mzxid. */
export function sameNode(a: ChildData, b: { stat: Stat }): boolean {
  return a.stat.czxid === b.stat.czxid && a.stat.mzxid === b.stat.mzxid;
}
