import { FakeTransport, FakeZooKeeper } from '../../test/FakeTransport';
import { OPEN_ACL } from '../transport/Transport';
import { mkdirs } from './nodeOps';

function connected(): { zk: FakeZooKeeper; t: FakeTransport } {
  const zk = new FakeZooKeeper();
  const t = zk.factory(false)({ connectString: 'x:1', sessionTimeoutMs: 1_000 }) as FakeTransport;
  t.connect();
  return { zk, t };
}

describe('mkdirs', () => {
  it('starts over when an ancestor it found goes before its child is created (a reaped container)', async () => {
    const { zk, t } = connected();
    // '/a' is found (NODEEXISTS), then gone when '/a/b' is created under it (NONODE).
    t.failures.push('NODEEXISTS', 'NONODE');
    await mkdirs(t, '/a/b/c', 'CONTAINER', () => OPEN_ACL);
    expect(['/a', '/a/b', '/a/b/c'].every((p) => zk.nodes.has(p))).toBe(true);
    expect(zk.calls.filter((c) => c.startsWith('create '))).toEqual(['create /a', 'create /a/b', 'create /a', 'create /a/b', 'create /a/b/c']);
  });

  it('gives up with NONODE after a few rounds, and passes other errors on at once', async () => {
    const { t } = connected();
    t.failures.push(...Array.from({ length: 5 }, () => 'NONODE' as const));
    await expect(mkdirs(t, '/a/b', 'PERSISTENT', () => OPEN_ACL)).rejects.toMatchObject({ code: 'NONODE' });
    expect(t.failures).toEqual([]);
    t.failures.push('NOAUTH');
    await expect(mkdirs(t, '/x/y', 'PERSISTENT', () => OPEN_ACL)).rejects.toMatchObject({ code: 'NOAUTH' });
  });
});
