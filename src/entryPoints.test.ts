import * as main from '../index';
import * as internals from '../internals';
import * as leader from '../recipes/leader';
import * as locks from '../recipes/locks';
import * as queue from '../recipes/queue';
import * as shared from '../recipes/shared';
import * as atomic from '../recipes/atomic';
import * as barriers from '../recipes/barriers';
import * as cache from '../recipes/cache';
import * as discovery from '../recipes/discovery';
import * as nodes from '../recipes/nodes';
import * as framework from '.';

describe('entry points', () => {
  it('keeps the machinery under the recipes out of the main entry', () => {
    for (const name of [
      'LockInternals',
      'LockMonitor',
      'SimpleLease',
      'QueueConsumerEngine',
      'standardDriver',
      'readLockDriver',
      'writeLockDriver',
      'encodeNode',
      'decodeNode',
      'encodeCount',
      'decodeCount',
      'sortLockNodes',
      'sequenceOf',
      'epochOf',
      'priorityItemName',
      'protectedName',
      'FakeTransport',
      // Made by the client, never by its users: their types stay public.
      'Session',
      'Transaction',
      'PersistentWatch',
      'PersistentWatcher',
      // CuratorCache's strategy seam, layouts and codecs.
      'OneShotTreeWatcher',
      'PersistentTreeWatcher',
      'READY_NODE',
      'INT_CODEC',
      'LONG_CODEC',
      'encodeInt',
      'decodeInt',
      'encodeLong',
      'decodeLong',
      'QueueBase',
      'DistributedAtomicNumber',
    ]) {
      expect(main).not.toHaveProperty(name);
    }
  });

  it('gives every export of the recipe families a place: the main entry, or zk-recipes/internals', () => {
    const families = { framework, locks, leader, queue, shared, cache, nodes, barriers, atomic, discovery };
    const homeless: string[] = [];
    for (const [family, exports] of Object.entries(families)) {
      for (const name of Object.keys(exports)) {
        if (!(name in main) && !(name in internals)) homeless.push(`${family}: ${name}`);
      }
    }
    expect(homeless).toEqual([]);
  });

  it('does not offer one name in both', () => {
    expect(Object.keys(internals).filter((name) => name in main)).toEqual([]);
  });
});
