import type { Watcher } from '../transport/Transport';
import { EventType } from './opcodes';
import { WatcherTables, watchBatches } from './watches';

const watcher = (): Watcher => () => undefined;

describe('WatcherTables', () => {
  it('keeps a lone path without a Map, and all its paths from the second on', () => {
    // An idle session watches one path (the ensemble's configuration): a Map for it costs each session.
    const Original = globalThis.Map;
    let built = 0;
    globalThis.Map = class<K, V> extends Original<K, V> {
      constructor(entries?: Iterable<readonly [K, V]> | null) {
        super(entries);
        built++;
      }
    } as MapConstructor;
    const reg = new WatcherTables();
    const [a, b] = [watcher(), watcher()];
    try {
      reg.add('data', '/zookeeper/config', a);
      expect(built).toBe(0);
      expect(reg.paths('data')).toEqual(['/zookeeper/config']);
      expect(reg.contains('/zookeeper/config', 'data', a)).toBe(true);
      reg.add('data', '/b', b);
    } finally {
      globalThis.Map = Original;
    }
    expect(reg.paths('data').sort()).toEqual(['/b', '/zookeeper/config']);
    expect(reg.materialize(EventType.nodeDataChanged, '/zookeeper/config')).toEqual(new Set([a]));
    expect(reg.materialize(EventType.nodeDataChanged, '/b')).toEqual(new Set([b]));
    expect(reg.isEmpty).toBe(true);
  });

  it('forgets a lone path once its watcher is removed or fired', () => {
    const reg = new WatcherTables();
    const [a, b] = [watcher(), watcher()];
    reg.add('data', '/a', a);
    expect(reg.remove('/a', 'data', b)).toEqual([]);
    expect(reg.remove('/a', 'data', a)).toEqual([a]);
    expect(reg.isEmpty).toBe(true);
    reg.add('child', '/a', a);
    expect(reg.materialize(EventType.nodeDataChanged, '/a').size).toBe(0);
    expect(reg.materialize(EventType.nodeChildrenChanged, '/a')).toEqual(new Set([a]));
    expect(reg.paths('child')).toEqual([]);
    reg.add('child', '/b', b);
    expect(reg.paths('child')).toEqual(['/b']);
  });

  it('fires data and exist watchers on created and changed, once', () => {
    const reg = new WatcherTables();
    const [d, e, c] = [watcher(), watcher(), watcher()];
    reg.add('data', '/a', d);
    reg.add('exist', '/a', e);
    reg.add('child', '/a', c);
    expect(reg.materialize(EventType.nodeDataChanged, '/a')).toEqual(new Set([d, e]));
    expect(reg.materialize(EventType.nodeDataChanged, '/a').size).toBe(0);
    expect(reg.materialize(EventType.nodeChildrenChanged, '/a')).toEqual(new Set([c]));
  });

  it('fires data, exist and child watchers on deleted', () => {
    const reg = new WatcherTables();
    const [d, c] = [watcher(), watcher()];
    reg.add('data', '/a', d);
    reg.add('child', '/a', c);
    expect(reg.materialize(EventType.nodeDeleted, '/a')).toEqual(new Set([d, c]));
    expect(reg.isEmpty).toBe(true);
  });

  it('fires every watcher of a path from one notification, and a watcher set twice once', () => {
    const reg = new WatcherTables();
    const [a, b] = [watcher(), watcher()];
    reg.add('data', '/a', a);
    reg.add('data', '/a', a);
    reg.add('data', '/a', b);
    expect([...reg.materialize(EventType.nodeCreated, '/a')]).toEqual([a, b]);
  });

  it('keeps persistent watchers after they fire; recursive ones see the subtree but no child events', () => {
    const reg = new WatcherTables();
    const [p, r, rootR] = [watcher(), watcher(), watcher()];
    reg.add('persistent', '/a', p);
    reg.add('persistentRecursive', '/a', r);
    reg.add('persistentRecursive', '/', rootR);
    expect(reg.materialize(EventType.nodeDataChanged, '/a')).toEqual(new Set([p, r, rootR]));
    expect(reg.materialize(EventType.nodeChildrenChanged, '/a')).toEqual(new Set([p]));
    expect(reg.materialize(EventType.nodeCreated, '/a/b/c')).toEqual(new Set([r, rootR]));
    expect(reg.materialize(EventType.nodeDeleted, '/ab')).toEqual(new Set([rootR]));
    expect(reg.hasPersistent).toBe(true);
  });

  it('removes and checks by kind, one watcher or all', () => {
    const reg = new WatcherTables();
    const [d, e, c, p] = [watcher(), watcher(), watcher(), watcher()];
    reg.add('data', '/a', d);
    reg.add('exist', '/a', e);
    reg.add('child', '/a', c);
    reg.add('persistent', '/a', p);
    expect(reg.contains('/a', 'data', c)).toBe(false);
    expect(reg.contains('/a', 'children', c)).toBe(true);
    expect(reg.remove('/a', 'data', c)).toEqual([]);
    expect(reg.remove('/a', 'data')).toEqual([d, e]);
    expect(reg.contains('/a', 'data')).toBe(false);
    expect(reg.remove('/a', 'any', p)).toEqual([p]);
    expect(reg.remove('/a', 'any')).toEqual([c]);
    expect(reg.isEmpty).toBe(true);
  });
});

describe('watchBatches', () => {
  it('lists every watched path once, by kind, in one batch when small', () => {
    const reg = new WatcherTables();
    reg.add('data', '/d', watcher());
    reg.add('exist', '/e', watcher());
    reg.add('child', '/c', watcher());
    expect(watchBatches(reg)).toEqual([
      { persistent: false, dataWatches: ['/d'], existWatches: ['/e'], childWatches: ['/c'], persistentWatches: [], persistentRecursiveWatches: [] },
    ]);
    expect(watchBatches(new WatcherTables())).toEqual([]);
  });

  it('cuts batches at about 128 KB of paths; only batches with persistent watches need SetWatches2', () => {
    const reg = new WatcherTables();
    const long = (i: number) => `/${String(i).padStart(6, '0')}${'x'.repeat(1000)}`;
    for (let i = 0; i < 300; i++) reg.add('data', long(i), watcher());
    reg.add('persistentRecursive', '/r', watcher());
    const batches = watchBatches(reg);
    expect(batches).toHaveLength(3);
    const all = batches.flatMap((b) => b.dataWatches);
    expect(all).toEqual(Array.from({ length: 300 }, (_, i) => long(i)));
    for (const b of batches) expect(b.dataWatches.join('').length).toBeLessThan(128 * 1024 + 1008);
    expect(batches.map((b) => b.persistent)).toEqual([false, false, true]);
    expect(batches[2].persistentRecursiveWatches).toEqual(['/r']);
  });
});
