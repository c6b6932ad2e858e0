import { ZkClient, type ConnectionStateErrorPolicy } from '../../src';
import { RetryNTimes } from '../../src/retry';
import { FakeTransport, FakeZooKeeper } from '../../test/FakeTransport';
import { LeaderLatch } from './LeaderLatch';

function setup(policy: ConnectionStateErrorPolicy) {
  const zk = new FakeZooKeeper();
  const client = new ZkClient({
    connectString: '127.0.0.1:2181',
    sessionTimeoutMs: 5_000,
    connectionTimeoutMs: 200,
    retryPolicy: new RetryNTimes({ n: 3, sleepMsBetweenRetries: 1 }),
    transportFactory: zk.factory(true),
    connectionStateErrorPolicy: policy,
  });
  client.start();
  const latch = new LeaderLatch(client, '/election', { id: 'me' });
  const events: string[] = [];
  latch.on('isLeader', () => events.push('isLeader'));
  latch.on('notLeader', () => events.push('notLeader'));
  return { zk, client, latch, events, transport: () => zk.transports[zk.transports.length - 1] as FakeTransport };
}

describe('LeaderLatch connection states (in-memory fake)', () => {
  it.each(['standard', 'session'] as const)('%s policy: SUSPENDED, RECONNECTED with the same session, then LOST and a new session', async (policy) => {
    const { zk, client, latch, events, transport } = setup(policy);
    latch.start();
    await latch.await({ timeoutMs: 1_000 });
    const first = latch.ourPath as string;
    expect(first).toMatch(/^\/election\/_c_[0-9a-f-]{36}-latch-0000000000$/);
    expect(zk.nodes.get(first)?.data.toString()).toBe('me');
    const session = client.sessionId;

    transport().disconnect();
    expect(client.state).toBe('SUSPENDED');
    expect(latch.hasLeadership).toBe(policy === 'session');

    transport().connect();
    expect(client.state).toBe('RECONNECTED');
    await latch.await({ timeoutMs: 1_000 });
    expect(latch.ourPath).toBe(first);
    expect(events).toEqual(policy === 'standard' ? ['isLeader', 'notLeader', 'isLeader'] : ['isLeader']);

    events.length = 0;
    transport().disconnect();
    expect(events).toEqual(policy === 'standard' ? ['notLeader'] : []);
    zk.expire(session);
    transport().connect(); // the server says the session expired
    expect(client.state).toBe('LOST');
    expect(latch.hasLeadership).toBe(false);
    expect(events).toEqual(['notLeader']);

    await latch.await({ timeoutMs: 1_000 });
    expect(client.sessionId).not.toBe(session);
    expect(latch.ourPath).not.toBe(first);
    expect(zk.nodes.get(latch.ourPath as string)?.ephemeralOwner).toBe(client.sessionId);
    expect(events.at(-1)).toBe('isLeader');
    await latch.close();
    expect(zk.nodes.has(latch.ourPath ?? '/none')).toBe(false);
    await client.close();
  });

  it('a step that fails is tried again: a create refused with a connection error still ends in leadership', async () => {
    const { client, latch, transport } = setup('standard');
    await client.blockUntilConnected({ timeoutMs: 1_000 });
    transport().failures.push('CONNECTIONLOSS', 'CONNECTIONLOSS', 'CONNECTIONLOSS', 'CONNECTIONLOSS', 'CONNECTIONLOSS');
    latch.start();
    await latch.await({ timeoutMs: 2_000 });
    await latch.close();
    await client.close();
  });
});
