import { GroupMember } from '../../../recipes/nodes';
import { IllegalStateError, InvalidArgumentError, ZkClient } from '../../../src';
import { FaultProxy, expireSession } from '../../../src/testing';
import { StateRecorder, eventually, randomRoot, timing } from '../../helpers';
import { useZooKeeper } from '../../fixture';

const membersOf = (member: GroupMember) => Object.fromEntries([...member.getCurrentMembers()].map(([id, data]) => [id, data.toString()]));

describe('GroupMember', () => {
  const members: GroupMember[] = [];
  let path: string;

  const zk = useZooKeeper({ beforeClose: () => Promise.all(members.splice(0).map((m) => m.close())) });
  beforeEach(() => {
    path = `${randomRoot('group')}/member`;
  });

  const join = async (client: ZkClient, id: string, payload?: string) => {
    const member = new GroupMember(client, path, id, { payload });
    members.push(member);
    member.start();
    await member.waitForInitialized({ timeoutMs: timing(10_000) });
    return member;
  };
  const sees = (member: GroupMember, expected: Record<string, string>) =>
    eventually(`${member.thisId} to see ${JSON.stringify(expected)}`, () => JSON.stringify(membersOf(member)) === JSON.stringify(expected) || undefined);

  // Curator's testBasic.
  it('members see each other, see one leave, and see a payload change', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const one = new GroupMember(client, path, '1', { payload: 'p1' });
    members.push(one);
    expect(membersOf(one)).toEqual({ 1: 'p1' });
    one.start();
    const two = await join(client, '2', 'p2');
    await one.waitForInitialized({ timeoutMs: timing(10_000) });
    await sees(one, { 1: 'p1', 2: 'p2' });
    await sees(two, { 1: 'p1', 2: 'p2' });
    expect((await client.exists(`${path}/1`))?.ephemeralOwner).toBe(client.sessionId);

    const removed = new Promise((resolve) => one.once('memberRemoved', resolve));
    await two.close();
    expect(await removed).toBe('2');
    expect(membersOf(one)).toEqual({ 1: 'p1' });

    const updated = new Promise((resolve) => one.once('memberUpdated', (id, data) => resolve(`${id} ${data.toString()}`)));
    await one.setThisData('something');
    expect(await updated).toBe('1 something');
    expect(membersOf(one)).toEqual({ 1: 'something' });
  });

  it("a member's session expires: the others see it leave and come back; it sees the group again", async () => {
    const a = await zk.clients.connect({ connectString: zk.server.connectString });
    const b = await zk.clients.connect({ connectString: zk.server.connectString });
    const states = new StateRecorder(b);
    const ma = await join(a, 'a', 'pa');
    const mb = await join(b, 'b', 'pb');
    await sees(ma, { a: 'pa', b: 'pb' });
    const seen: string[] = [];
    ma.on('memberRemoved', (id) => seen.push(`removed ${id}`)).on('memberAdded', (id) => seen.push(`added ${id}`));
    const mark = states.mark();
    await expireSession(b);
    await states.waitFor('RECONNECTED', mark);
    await eventually('a to see b leave and come back', () => seen.join() === 'removed b,added b');
    await sees(ma, { a: 'pa', b: 'pb' });
    await sees(mb, { a: 'pa', b: 'pb' });
  });

  it('a partition longer than the session and a server restart: the group comes back whole', async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const a = await zk.clients.connect({ connectString: zk.server.connectString });
    const b = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 4_000 });
    const states = new StateRecorder(b);
    const ma = await join(a, 'a', 'pa');
    const mb = await join(b, 'b', 'pb');
    await sees(ma, { a: 'pa', b: 'pb' });
    const mark = states.mark();
    proxy.blackhole();
    await states.waitFor('LOST', mark);
    await sees(ma, { a: 'pa' });
    proxy.heal();
    await states.waitFor('RECONNECTED', mark);
    await sees(ma, { a: 'pa', b: 'pb' });
    await zk.server.restart();
    await sees(ma, { a: 'pa', b: 'pb' });
    await sees(mb, { a: 'pa', b: 'pb' });
  });

  it('refuses bad ids and misuse', async () => {
    const client = new ZkClient({ connectString: zk.server.connectString });
    expect(() => new GroupMember(client, path, '')).toThrow(InvalidArgumentError);
    expect(() => new GroupMember(client, path, 'a/b')).toThrow(InvalidArgumentError);
    expect(() => new GroupMember(client, path, '..')).toThrow(InvalidArgumentError);
    const member = new GroupMember(client, path, 'x');
    await expect(member.waitForInitialized()).rejects.toThrow(IllegalStateError);
    await client.close();
  });
});
