import { DistributedIdQueue } from '../../../recipes/queue';
import type { ZkClient } from '../../../src';
import { FaultProxy, TestingServer, expireSession } from '../../../src/testing';
import { Clients, StateRecorder, eventually, randomRoot, timing } from '../../helpers';
import { Collector, Gate, childrenOf } from './queueTesting';

// DistributedIdQueue.remove(id) in lock-safe mode: each item is deleted under our EPHEMERAL lock
// node, in that node's session only.
describe('DistributedIdQueue.remove under session faults', () => {
  let server: TestingServer;
  const clients = new Clients();
  let zk: ZkClient;
  let path: string;
  let lockPath: string;
  const queues: Array<DistributedIdQueue<string>> = [];
  /** Handlers' gates, opened after each test so that a failed test does not hold the queues' close. */
  const gates: Gate[] = [];

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
  });
  beforeEach(async () => {
    const root = randomRoot('id-queue-faults');
    path = `${root}/q`;
    lockPath = `${root}/locks`;
    zk = await clients.connect({ connectString: server.connectString });
  });
  afterEach(async () => {
    for (const gate of gates.splice(0)) gate.open();
    await Promise.all(queues.splice(0).map((q) => q.close()));
    await clients.closeAll();
  });
  afterAll(() => server?.close());

  function track(queue: DistributedIdQueue<string>): DistributedIdQueue<string> {
    queues.push(queue);
    return queue;
  }

  const lockOwner = async (name: string) => (await zk.exists(`${lockPath}/${name}`))?.ephemeralOwner;

  // The session ends between our lock's create and the delete of the item; another consumer then
  // locks the item. The delete is held back until then (a transaction where the transport has
  // multi, a delete otherwise), as a retry of it in the next session would run.
  it("our lock goes with our session before the item is deleted; another consumer locks it: neither its lock nor the item is touched", async () => {
    await new DistributedIdQueue<string>(zk, path, { lockPath }).put('precious', 'x');
    const [name] = await childrenOf(zk, path);
    const aClient = await clients.connect({ connectString: server.connectString });
    const states = new StateRecorder(aClient);
    const a = track(new DistributedIdQueue<string>(aClient, path, { lockPath }));
    const asked = new Gate();
    const release = new Gate();
    let holding = true;
    const hold = <T>(run: () => Promise<T>): Promise<T> => {
      if (!holding) return run();
      holding = false;
      asked.open();
      return release.promise.then(run);
    };
    const realDelete = aClient.delete.bind(aClient);
    aClient.delete = (p, options) => (p === `${path}/${name}` ? hold(() => realDelete(p, options)) : realDelete(p, options));
    const realTransaction = aClient.transaction.bind(aClient);
    aClient.transaction = () => {
      const tx = realTransaction();
      const commit = tx.commit.bind(tx);
      tx.commit = (options) => hold(() => commit(options));
      return tx;
    };

    const firstSession = aClient.sessionId;
    const removing = a.remove('x');
    await asked.promise;
    expect(await lockOwner(name)).toBe(firstSession);

    const bClient = await clients.connect({ connectString: server.connectString });
    const got = new Collector<string>();
    const stuck = new Gate();
    gates.push(stuck);
    track(new DistributedIdQueue<string>(bClient, path, { lockPath })).start(async (item) => {
      got.add(item);
      await stuck.promise;
    });
    const mark = states.mark();
    await expireSession(aClient);
    await states.waitFor('RECONNECTED', mark);
    expect(await got.waitForCount(1)).toEqual(['precious']);
    expect(await lockOwner(name)).toBe(bClient.sessionId);

    release.open();
    expect(await removing).toBe(0);
    expect(await childrenOf(zk, path)).toEqual([name]);
    expect(await lockOwner(name)).toBe(bClient.sessionId);
    expect(aClient.pendingBackgroundDeletes).toBe(0);

    stuck.open();
    await eventually('the item and its lock to go', async () => (await childrenOf(zk, path)).length === 0 && (await childrenOf(zk, lockPath)).length === 0);
    expect(got.items).toEqual(['precious']);
  });

  // The reply to our lock's create is lost and the client gives the session up (LOST) while the
  // server still keeps it: the create, retried in the next session, meets our own old lock node.
  // That node is not another consumer's: the removal waits for it to go, then removes the item.
  it('a lock create retried in the next session meets our own old lock node: the item is removed all the same', async () => {
    await using proxy = await FaultProxy.start(server.connectString);
    await new DistributedIdQueue<string>(zk, path, { lockPath }).put('cancelled', 'x');
    const [name] = await childrenOf(zk, path);
    const aClient = await clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 6_000 });
    const states = new StateRecorder(aClient);
    const a = new DistributedIdQueue<string>(aClient, path, { lockPath });
    let dropping = false;
    const realCreate = aClient.create.bind(aClient);
    aClient.create = (p, options) => {
      if (p === `${lockPath}/${name}` && !dropping) {
        dropping = true;
        // From now on the server's replies are lost, this create's first (the server runs it, in
        // our session), on this connection and on every reconnect of our session, which keeps it
        // alive on the server. A connection that opens a new session (its ConnectRequest has
        // session id 0, at byte 20) goes through.
        const verdicts = new Map<number, 'forward' | 'drop'>();
        proxy.intercept((chunk, { connection, direction }) => {
          if (!verdicts.has(connection)) {
            const newSession = direction === 'client->upstream' && chunk.length >= 28 && chunk.readBigInt64BE(20) === 0n;
            verdicts.set(connection, newSession ? 'forward' : 'drop');
          }
          return direction === 'upstream->client' ? (verdicts.get(connection) as 'forward' | 'drop') : 'forward';
        });
      }
      return realCreate(p, options);
    };
    const firstSession = aClient.sessionId;
    const mark = states.mark();
    const removing = a.remove('x');
    await eventually('our lock node on the server', async () => (await lockOwner(name)) === firstSession, timing(20_000), 5);
    await states.waitForNewSession(mark);
    // The server keeps our old session a while yet: its lock node still stands.
    expect(await lockOwner(name)).toBe(firstSession);
    expect(await removing).toBe(1);
    expect(await childrenOf(zk, path)).toEqual([]);
    await eventually('no lock left', async () => (await childrenOf(zk, lockPath)).length === 0);
  });
});
