import { LeaderLatch, LeaderSelector, observeLeader, type LeaderInfo } from '../../../recipes/leader';
import type { ZkClient, ZkClientOptions } from '../../../src';
import { FaultProxy } from '../../../src/testing';
import { StateRecorder, eventually, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';
import { InstrumentedTransports } from '../../instrumentedTransports';
import { LeadershipLog } from './leaderHelpers';

/** The next value of an observer, or a rejection after `timeoutMs`. */
function next(it: AsyncIterator<LeaderInfo | undefined>, timeoutMs = timing(20_000)): Promise<LeaderInfo | undefined> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no leader change within ${timeoutMs} ms`)), timeoutMs);
    it.next().then(
      (r) => {
        clearTimeout(timer);
        if (r.done) reject(new Error('the observer ended'));
        else resolve(r.value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

describe('observeLeader', () => {
  let path: string;
  const closers: Array<() => Promise<void>> = [];
  const stop = new Set<AbortController>();

  const connect = (extra: Partial<ZkClientOptions> = {}): Promise<ZkClient> => zk.clients.connect({ connectString: zk.server.connectString, ...extra });
  const observer = (client: ZkClient) => {
    const aborter = new AbortController();
    stop.add(aborter);
    return observeLeader(client, path, { signal: aborter.signal })[Symbol.asyncIterator]();
  };
  const latch = (client: ZkClient, id: string) => {
    const l = new LeaderLatch(client, path, { id });
    closers.push(() => l.close());
    l.start();
    return l;
  };

  const zk = useZooKeeper({
    beforeClose: async () => {
        for (const a of stop) a.abort();
        stop.clear();
        await Promise.all(closers.splice(0).map((c) => c()));
      },
  });
  beforeEach(() => {
    path = `${randomRoot('observe')}/leader`;
  });

  it('follows a latch: nobody while the path is missing, then each leader in turn, then nobody again', async () => {
    const client = await connect();
    const it = observer(client);
    expect(await next(it)).toBeUndefined();
    const a = latch(client, 'a');
    const first = await next(it);
    expect(first?.id).toBe('a');
    expect(first?.node).toBe(await eventually('a node', () => a.ourPath));
    const b = latch(client, 'b');
    await eventually('b to join', () => b.ourPath !== undefined);
    await a.close();
    expect((await next(it))?.id).toBe('b');
    await b.close();
    expect(await next(it)).toBeUndefined();
  });

  it('follows a LeaderSelector path too (lock- nodes)', async () => {
    const client = await connect();
    const log = new LeadershipLog();
    const one = log.selectorTask('one');
    const two = log.selectorTask('two');
    const s1 = new LeaderSelector(client, path, { id: 'one', takeLeadership: one.takeLeadership });
    const s2 = new LeaderSelector(client, path, { id: 'two', takeLeadership: two.takeLeadership });
    closers.push(() => s1.close(), () => s2.close());
    s1.start();
    await log.next('one', 'isLeader');
    s2.start();
    const it = observer(client);
    expect((await next(it))?.id).toBe('one');
    one.release();
    expect((await next(it))?.id).toBe('two');
  });

  it('watches only the leader: participants joining behind it wake nothing', async () => {
    const traced = new InstrumentedTransports();
    const watcher = await connect({ transportFactory: traced.factory });
    const client = await connect();
    const a = latch(client, 'a');
    await a.await({ timeoutMs: timing(10_000) });
    const it = observer(watcher);
    expect((await next(it))?.id).toBe('a');
    const before = traced.calls.length;
    const followers = ['f1', 'f2', 'f3'].map((id) => latch(client, id));
    await eventually('the followers to join', () => followers.every((f) => f.ourPath !== undefined));
    await a.close();
    expect((await next(it))?.id).toBe('f1');
    // One listing and one read of the new leader: the joins cost the observer nothing.
    expect(traced.calls.slice(before)).toEqual([`getChildren ${path}`, `getData ${f1Node(followers)}`]);
  });

  it('ends with the signal, rejecting with its reason; leaving a for-await loop ends it too', async () => {
    const client = await connect();
    latch(client, 'a');
    const aborter = new AbortController();
    const it = observeLeader(client, path, { signal: aborter.signal });
    const seen: Array<string | undefined> = [];
    for await (const leader of it) {
      seen.push(leader?.id);
      if (leader) break;
    }
    expect(seen.at(-1)).toBe('a');
    const again = observeLeader(client, path, { signal: aborter.signal })[Symbol.asyncIterator]();
    expect((await next(again))?.id).toBe('a');
    const pending = again.next();
    aborter.abort(new Error('enough'));
    await expect(pending).rejects.toThrow('enough');
    // Bad input rejects, at the first next(), like any promise of the library.
    await expect(observeLeader(client, 'bad').next()).rejects.toThrow(/must start with/);
  });

  it('a leader change during a partition is reported once the observer reconnects', async () => {
    const proxy = await FaultProxy.start(zk.server.connectString);
    closers.push(() => proxy.close());
    const watcher = await zk.clients.connect({ connectString: proxy.connectString, connectionStateErrorPolicy: 'session' });
    const states = new StateRecorder(watcher);
    const client = await connect();
    const a = latch(client, 'a');
    const b = latch(client, 'b');
    await eventually('both to join', () => a.ourPath !== undefined && b.ourPath !== undefined);
    const it = observer(watcher);
    expect((await next(it))?.id).toBe('a');
    const mark = states.mark();
    proxy.cut();
    await states.waitFor('SUSPENDED', mark);
    await a.close();
    await b.await({ timeoutMs: timing(10_000) });
    proxy.heal();
    expect((await next(it))?.id).toBe('b');
  });
});

function f1Node(followers: LeaderLatch[]): string {
  return followers[0].ourPath as string;
}
