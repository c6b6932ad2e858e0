/**
 * The cache under a burst: 10,000 changes across 1,000 nodes, with a server restart and an expiry
 * of the cache's session in the middle. At the end the cache, a map built from its listener
 * events and a map built from its iterator all equal the tree as read afresh, and no event was
 * out of place (a `created` for a node held, a `changed` or `deleted` for one not held).
 */
import { CuratorCache } from '../../../recipes/cache';
import { isZkError, type ZkClient } from '../../../src';
import { TestingServer, expireSession } from '../../../src/testing';
import { XorShift32 } from '../../../bench/peers/rng';
import { Clients, StateRecorder, eventually, randomRoot, timing } from '../../helpers';
import { EventMirror, cacheMatches, contentsOf, describeDifference, treeOf } from './cacheTesting';

const PARENTS = 10;
const SLOTS = 1_000;
const CHANGES = 10_000;
/** Changes in flight at once, each on its own node. */
const WINDOW = 40;

describe('CuratorCache under a burst of changes', () => {
  let server: TestingServer;
  const clients = new Clients();

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
  });
  afterAll(async () => {
    await clients.closeAll();
    await server.close();
  });

  /** One change on a node: data if it exists (or, one time in five, a delete), else a create. */
  async function change(writer: ZkClient, path: string, rng: XorShift32, n: number): Promise<void> {
    const data = `v${n}`;
    const exists = (await writer.exists(path)) !== null;
    try {
      if (!exists) await writer.create(path, { data });
      else if (rng.next() % 5 === 0) await writer.delete(path);
      else await writer.setData(path, data);
    } catch (err) {
      // A change retried after a lost reply finds its own work done.
      if (!isZkError(err, 'NODEEXISTS') && !isZkError(err, 'NONODE')) throw err;
    }
  }

  it('10,000 changes across 1,000 nodes, a server restart and a session expiry: the cache ends identical to the tree', async () => {
    const root = randomRoot('burst');
    const writer = await clients.connect({ connectString: server.connectString, connectionTimeoutMs: timing(30_000) });
    const watcher = await clients.connect({ connectString: server.connectString, connectionTimeoutMs: timing(30_000) });
    const states = new StateRecorder(watcher);
    const slot = (k: number) => `${root}/p${k % PARENTS}/n${Math.floor(k / PARENTS)}`;
    await writer.create(root);
    for (let p = 0; p < PARENTS; p++) await writer.create(`${root}/p${p}`, { data: `parent ${p}` });
    await Promise.all(Array.from({ length: SLOTS / 2 }, (_, k) => writer.create(slot(k * 2), { data: 'initial' })));

    const cache = new CuratorCache(watcher, root);
    const mirror = new EventMirror().attach(cache);
    cache.start();
    await cache.waitForInitialized({ timeoutMs: timing(60_000) });
    expect(cache.size).toBe(1 + PARENTS + SLOTS / 2);
    // The iterator is read in step with the burst; it lags as it likes.
    const iterated = new EventMirror();
    const stop = new AbortController();
    const reading = (async () => {
      for await (const event of cache.events({ signal: stop.signal })) iterated.apply(event);
    })().catch((err: unknown) => {
      if (err !== stop.signal.reason) throw err;
    });

    // The faults come in the middle of the burst, with changes in flight: a server restart at the
    // 3,000th change, an expiry of the cache's session at the 6,000th.
    const rng = new XorShift32(0x5eed);
    let made = 0;
    const faults: Promise<void>[] = [];
    const mark = states.mark();
    const lanes = Array.from({ length: WINDOW }, async (_, lane) => {
      // Lane `lane` owns the nodes equal to it modulo WINDOW, so no two changes to a node overlap.
      for (let n = lane; n < CHANGES; n += WINDOW) {
        await change(writer, slot((rng.next() % (SLOTS / WINDOW)) * WINDOW + lane), rng, n);
        made++;
        if (made === 3_000) faults.push(server.restart());
        if (made === 6_000) faults.push(expireSession(watcher));
      }
    });
    await Promise.all(lanes);
    await Promise.all(faults);
    // The restart's RECONNECTED may come first: wait for the expiry's LOST, then the new session.
    await states.waitFor('LOST', mark);
    await states.waitFor('RECONNECTED', states.states.indexOf('LOST', mark));

    const tree = await treeOf(writer, root);
    await cacheMatches(cache, tree, timing(60_000));
    expect(describeDifference(mirror.contents(), tree)).toBe('0 differences');
    expect(mirror.errors).toEqual([]);
    // The iterator catches up with the cache.
    await eventually('the iterator to catch up', () => describeDifference(iterated.contents(), tree) === '0 differences');
    expect(iterated.errors).toEqual([]);
    stop.abort(new Error('done'));
    await reading;
    expect(contentsOf(cache).size).toBe(tree.size);
    await cache.close();
  });
});
