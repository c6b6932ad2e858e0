import { SharedValue } from '../../recipes/shared';
import type { ZkClient } from '../../src';
import { TestingServer } from '../../src/testing';
import { Clients, nextEvent, randomRoot } from '../helpers';
import { CuratorPeer } from './CuratorPeer';

interface Seen {
  value: string;
  version: number;
}

describe("SharedValue with Curator's on the same node", () => {
  let server: TestingServer;
  let peer: CuratorPeer;
  const clients = new Clients();
  const values: SharedValue[] = [];
  let client: ZkClient;
  let path: string;
  let n = 0;

  beforeAll(async () => {
    server = await TestingServer.start({ forceSync: false });
    peer = await CuratorPeer.start(server.connectString, { label: 'curator-shared-value' });
  });
  beforeEach(async () => {
    path = `${randomRoot('interop-shared')}/value`;
    client = await clients.connect({ connectString: server.connectString });
  });
  afterEach(async () => {
    for (const v of values.splice(0)) v.close();
    await clients.closeAll();
  });
  afterAll(async () => {
    await peer?.close();
    await server?.close();
  });

  const ours = async (seed: string) => {
    const value = new SharedValue(client, path, seed);
    values.push(value);
    await value.start();
    return value;
  };
  const javaValue = async (seed: string) => {
    const name = `shared-${++n}`;
    await peer.request('sharedValue.new', { name, path, seed });
    return name;
  };
  const javaChangedTo = (name: string, value: string, since: number) => peer.waitForEvent({ event: 'sharedValueChanged', name, value }, { since });
  const oursChangedTo = (shared: SharedValue, text: string) =>
    nextEvent<number>((done) => shared.on('changed', (bytes, version) => bytes.toString() === text && done(version)), `our value ${text}`);

  it('Node seeds and sets, Java reads; Java sets, Node reads: the bytes as they are, at the same versions', async () => {
    const node = await ours('seed from node');
    const java = await javaValue('seed from java');
    // The node existed: Curator keeps its value rather than its own seed.
    expect(await peer.request<Seen>('sharedValue.get', { name: java })).toMatchObject({ value: 'seed from node', version: 0 });

    const since = peer.mark();
    await node.setValue('héllo from node');
    await javaChangedTo(java, 'héllo from node', since);
    expect(await peer.request<Seen>('sharedValue.get', { name: java })).toMatchObject({ value: 'héllo from node', version: 1 });

    const heard = oursChangedTo(node, 'from java');
    await peer.request('sharedValue.set', { name: java, value: 'from java' });
    expect(await heard).toBe(2);
    expect(node.getVersionedValue()).toEqual({ value: Buffer.from('from java'), version: 2 });
  });

  it('Java seeds a missing node and Node keeps its value', async () => {
    const java = await javaValue('seed from java');
    const node = await ours('seed from node');
    expect(node.getVersionedValue()).toEqual({ value: Buffer.from('seed from java'), version: 0 });
    expect(await peer.request<Seen>('sharedValue.get', { name: java })).toMatchObject({ value: 'seed from java', version: 0 });
  });

  it('trySetValue across the two: whoever writes first at the version both saw wins, and the loser then sees the winner', async () => {
    const node = await ours('start');
    const java = await javaValue('start');

    // Both saw version 0. Node writes first; Java's try at version 0 fails and Java sees Node's value.
    const nodeSaw = node.getVersionedValue();
    expect(await peer.request<Seen>('sharedValue.remember', { name: java })).toMatchObject({ value: 'start', version: 0 });
    expect(await node.trySetValue(nodeSaw, 'node won')).toBe(true);
    expect(await peer.request<Seen & { succeeded: boolean }>('sharedValue.trySet', { name: java, value: 'java lost' })).toMatchObject({
      succeeded: false,
      value: 'node won',
      version: 1,
    });

    // Both saw version 1. Java writes first; Node's try at version 1 fails and Node sees Java's value.
    const nodeSawAgain = node.getVersionedValue();
    expect(nodeSawAgain).toEqual({ value: Buffer.from('node won'), version: 1 });
    expect(await peer.request<Seen>('sharedValue.remember', { name: java })).toMatchObject({ value: 'node won', version: 1 });
    expect(await peer.request<Seen & { succeeded: boolean }>('sharedValue.trySet', { name: java, value: 'java won' })).toMatchObject({
      succeeded: true,
      value: 'java won',
      version: 2,
    });
    expect(await node.trySetValue(nodeSawAgain, 'node lost')).toBe(false);
    expect(node.getVersionedValue()).toEqual({ value: Buffer.from('java won'), version: 2 });
    expect((await client.getData(path)).data.toString()).toBe('java won');
  });
});
