/**
 * A transaction committed with a marker (`markerParent`) whose reply or request is lost, at every
 * step, through a FaultProxy in front of a real server: applied at most once, never sent again
 * blindly, and the caller told whether it went in. Protocol transport only: the native binding has
 * no multi (a commit there rejects with UnsupportedError, and the queue recipes write without a
 * transaction).
 */
import { countRequests, loseNext } from '../../chaos/frames';
import { TransactionOutcomeUnknownError, type ZkClient } from '../../src';
import { OpCode } from '../../src/protocol/opcodes';
import { RetryNTimes } from '../../src/retry';
import { expireSession } from '../../src/testing';
import { childrenOf, eventually, randomRoot, timing } from '../helpers';
import { useZooKeeper } from '../fixture';

const { delete: DELETE, multi: MULTI, exists: EXISTS, sync: SYNC } = OpCode;

describe('a transaction committed with a marker, across lost replies', () => {
  const zk = useZooKeeper({ proxy: 'each' });
  let admin: ZkClient;

  beforeEach(async () => {
    admin = await zk.clients.connect({ connectString: zk.server.connectString });
  });

  /** A client behind the proxy whose requests are counted; counting goes first, so it sees what the faults then drop. */
  async function behindProxy(options: { retries?: number; sessionTimeoutMs?: number } = {}): Promise<{ client: ZkClient; count(op: number): number }> {
    const counter = countRequests();
    zk.proxy.intercept(counter.interceptor);
    const client = await zk.clients.connect({
      connectString: zk.proxy.connectString,
      sessionTimeoutMs: options.sessionTimeoutMs ?? 10_000,
      retryPolicy: new RetryNTimes({ n: options.retries ?? 10, sleepMsBetweenRetries: 100 }),
    });
    return { client, count: counter.count };
  }

  it('reply lost after the server applied it: resolves with the results, applied once, sent once', async () => {
    const root = randomRoot('txn');
    await admin.create(`${root}/x`, { data: 'v0', createParents: 'persistent' });
    await admin.create(`${root}/markers`);
    const { client, count } = await behindProxy();
    const lost: number[] = [];
    zk.proxy.intercept(loseNext(new Set([MULTI]), 'reply', (l) => lost.push(l.xid)));

    const results = await client
      .transaction()
      .create(`${root}/seq-`, { mode: 'PERSISTENT_SEQUENTIAL', data: 'once' })
      .setData(`${root}/x`, 'v1')
      .create(`${root}/plain`)
      .commit({ markerParent: `${root}/markers` });
    expect(lost).toHaveLength(1);
    const [seq, set, plain] = results;
    const onServer = (await childrenOf(admin, root)).filter((n) => n.startsWith('seq-'));
    expect(onServer).toHaveLength(1);
    expect(seq).toEqual({ type: 'create', path: `${root}/${onServer[0]}` });
    // Applied once: the unversioned setData moved the version from 0 to 1, not 2.
    expect(set).toMatchObject({ type: 'setData', path: `${root}/x`, stat: { version: 1 } });
    expect((await admin.getData(`${root}/x`)).stat.version).toBe(1);
    expect(plain).toEqual({ type: 'create', path: `${root}/plain` });
    expect(count(MULTI)).toBe(1);
    await eventually('the marker to be deleted', async () => (await childrenOf(admin, `${root}/markers`)).length === 0);
  });

  it('a create and a versioned setData, reply lost: resolves instead of NODEEXISTS, applied once', async () => {
    const root = randomRoot('txn');
    await admin.create(`${root}/x`, { data: 'v0', createParents: 'persistent' });
    await admin.create(`${root}/markers`);
    const { client, count } = await behindProxy();
    const lost: number[] = [];
    zk.proxy.intercept(loseNext(new Set([MULTI]), 'reply', (l) => lost.push(l.xid)));
    const results = await client.transaction().create(`${root}/a`).setData(`${root}/x`, 'v1', { version: 0 }).commit({ markerParent: `${root}/markers` });
    expect(lost).toHaveLength(1);
    expect(results).toMatchObject([
      { type: 'create', path: `${root}/a` },
      { type: 'setData', path: `${root}/x`, stat: { version: 1 } },
    ]);
    expect(count(MULTI)).toBe(1);
  });

  it('request lost before the server saw it: the marker is absent, so it is sent again and applied once', async () => {
    const root = randomRoot('txn');
    await admin.create(`${root}/x`, { data: 'v0', createParents: 'persistent' });
    await admin.create(`${root}/markers`);
    const { client, count } = await behindProxy();
    const lost: number[] = [];
    zk.proxy.intercept(loseNext(new Set([MULTI]), 'request', (l) => lost.push(l.xid)));
    const results = await client.transaction().create(`${root}/seq-`, { mode: 'PERSISTENT_SEQUENTIAL' }).setData(`${root}/x`, 'v1').commit({ markerParent: `${root}/markers` });
    expect(lost).toHaveLength(1);
    const onServer = (await childrenOf(admin, root)).filter((n) => n.startsWith('seq-'));
    expect(onServer).toHaveLength(1);
    expect(results).toMatchObject([
      { type: 'create', path: `${root}/${onServer[0]}` },
      { type: 'setData', stat: { version: 1 } },
    ]);
    // Lost, looked for (sync, exists), sent again.
    expect(count(MULTI)).toBe(2);
    expect(count(SYNC)).toBeGreaterThanOrEqual(1);
    await eventually('the marker to be deleted', async () => (await childrenOf(admin, `${root}/markers`)).length === 0);
  });

  it('creates a missing marker parent as a container, and leaves no marker behind', async () => {
    const root = randomRoot('txn');
    await admin.create(root);
    const { client, count } = await behindProxy();
    await client.transaction().create(`${root}/a`).commit({ markerParent: `${root}/markers/deeper` });
    expect(await admin.exists(`${root}/a`)).not.toBeNull();
    // Refused for the missing parent (nothing happened), then sent again once the parent was made.
    expect(count(MULTI)).toBe(2);
    await eventually('the marker to be deleted', async () => (await childrenOf(admin, `${root}/markers/deeper`).catch(() => [])).length === 0);
  });

  it("the marker's delete loses its connection: the marker is deleted once reconnected, in the same session", async () => {
    // Found by the chaos suite (seed 5009): a server paused while the delete was on its way left
    // the marker standing for as long as its session lived.
    const root = randomRoot('txn');
    await admin.create(`${root}/markers`, { createParents: 'persistent' });
    const { client } = await behindProxy();
    const session = client.sessionId;
    const lost: number[] = [];
    zk.proxy.intercept(loseNext(new Set([DELETE]), 'request', (l) => lost.push(l.xid)));
    const [created] = await client.transaction().create(`${root}/a`).commit({ markerParent: `${root}/markers` });
    expect(created).toEqual({ type: 'create', path: `${root}/a` });
    await eventually('the marker to be deleted', async () => (await childrenOf(admin, `${root}/markers`)).length === 0);
    expect(lost).toHaveLength(1);
    expect(client.sessionId).toBe(session);
  });

  it('the marker check loses its connection every time: OUTCOME_UNKNOWN, and the multi is never sent again', async () => {
    const root = randomRoot('txn');
    await admin.create(`${root}/markers`, { createParents: 'persistent' });
    const { client, count } = await behindProxy({ retries: 3 });
    zk.proxy.intercept(loseNext(new Set([MULTI]), 'reply', () => zk.proxy.intercept(loseNext(new Set([SYNC, EXISTS]), 'request', () => undefined, 1_000))));
    const err = await client
      .transaction()
      .create(`${root}/a`)
      .commit({ markerParent: `${root}/markers` })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransactionOutcomeUnknownError);
    expect(err).toMatchObject({ code: 'OUTCOME_UNKNOWN', applied: undefined, results: [undefined], cause: { code: 'CONNECTIONLOSS' } });
    expect(count(MULTI)).toBe(1);
    expect(count(SYNC)).toBeGreaterThanOrEqual(2);
    // It did go in, once.
    expect(await admin.exists(`${root}/a`)).not.toBeNull();
    // Nobody will look for the marker again, and the session lives on: it is deleted, not left for the session's end.
    await eventually('the marker to be deleted', async () => (await childrenOf(admin, `${root}/markers`)).length === 0);
  });

  it('reply lost, then no server to be reached: rejects with OUTCOME_UNKNOWN within timeoutMs', async () => {
    const root = randomRoot('txn');
    await admin.create(`${root}/markers`, { createParents: 'persistent' });
    const { client, count } = await behindProxy();
    zk.proxy.intercept(loseNext(new Set([MULTI]), 'reply', () => zk.proxy.blackhole()));
    const timeoutMs = timing(2_000);
    const started = Date.now();
    const err = await client
      .transaction()
      .create(`${root}/a`)
      .commit({ markerParent: `${root}/markers`, timeoutMs })
      .catch((e: unknown) => e);
    const tookMs = Date.now() - started;
    expect(err).toMatchObject({ code: 'OUTCOME_UNKNOWN', applied: undefined, cause: { code: 'TIMEOUT' } });
    expect(tookMs).toBeLessThan(timeoutMs + timing(5_000));
    zk.proxy.heal();
    await client.blockUntilConnected({ timeoutMs: timing(20_000) });
    expect(count(MULTI)).toBe(1);
    expect(await admin.exists(`${root}/a`)).not.toBeNull();
    await eventually('the marker to be deleted', async () => (await childrenOf(admin, `${root}/markers`)).length === 0);
  });

  it('a signal that aborts while the outcome is in doubt: OUTCOME_UNKNOWN with the reason, at once', async () => {
    const root = randomRoot('txn');
    await admin.create(`${root}/markers`, { createParents: 'persistent' });
    const { client, count } = await behindProxy();
    const controller = new AbortController();
    zk.proxy.intercept(
      loseNext(new Set([MULTI]), 'reply', () => {
        zk.proxy.blackhole();
        setImmediate(() => controller.abort(new Error('given up')));
      }),
    );
    const err = await client
      .transaction()
      .create(`${root}/a`)
      .commit({ markerParent: `${root}/markers`, signal: controller.signal })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'OUTCOME_UNKNOWN', applied: undefined, cause: { message: 'given up' } });
    zk.proxy.heal();
    await client.blockUntilConnected({ timeoutMs: timing(20_000) });
    expect(count(MULTI)).toBe(1);
  });

  it('the session ends before the marker is checked: OUTCOME_UNKNOWN, and not sent again in the new session', async () => {
    const root = randomRoot('txn');
    await admin.create(`${root}/markers`, { createParents: 'persistent' });
    const { client, count } = await behindProxy();
    const lost: number[] = [];
    zk.proxy.intercept(
      loseNext(new Set([MULTI]), 'reply', (l) => {
        zk.proxy.blackhole();
        lost.push(l.xid);
      }),
    );
    const credentials = client.getSessionCredentials();
    const commit = client
      .transaction()
      .create(`${root}/seq-`, { mode: 'PERSISTENT_SEQUENTIAL' })
      .commit({ markerParent: `${root}/markers` })
      .catch((e: unknown) => e);
    await eventually('the reply to be lost', () => lost.length === 1);
    await expireSession(credentials, { connectString: zk.server.connectString });
    zk.proxy.heal();
    const err = await commit;
    expect(err).toMatchObject({ code: 'OUTCOME_UNKNOWN', applied: undefined, results: [undefined] });
    expect(count(MULTI)).toBe(1);
    expect((await childrenOf(admin, root)).filter((n) => n.startsWith('seq-'))).toHaveLength(1);
  });

  it('applied, but a node it made is gone by the check: OUTCOME_UNKNOWN with applied true and what can be read back', async () => {
    const root = randomRoot('txn');
    await admin.create(`${root}/markers`, { createParents: 'persistent' });
    const { client, count } = await behindProxy();
    const lost: number[] = [];
    zk.proxy.intercept(
      loseNext(new Set([MULTI]), 'reply', (l) => {
        zk.proxy.blackhole();
        lost.push(l.xid);
      }),
    );
    const commit = client
      .transaction()
      .create(`${root}/seq-`, { mode: 'PERSISTENT_SEQUENTIAL' })
      .create(`${root}/plain`)
      .commit({ markerParent: `${root}/markers` })
      .catch((e: unknown) => e);
    await eventually('the reply to be lost', () => lost.length === 1);
    const [made] = (await childrenOf(admin, root)).filter((n) => n.startsWith('seq-'));
    await admin.delete(`${root}/${made}`);
    zk.proxy.heal();
    const err = await commit;
    expect(err).toBeInstanceOf(TransactionOutcomeUnknownError);
    expect(err).toMatchObject({ applied: true, results: [undefined, { type: 'create', path: `${root}/plain` }] });
    expect(count(MULTI)).toBe(1);
  });
});
