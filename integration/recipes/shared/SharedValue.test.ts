import type { ZkClient } from '../../../src';
import { IllegalStateError, InvalidArgumentError } from '../../../src';
import { FaultProxy } from '../../../src/testing';
import { SharedValue, type VersionedValue } from '../../../recipes/shared';
import { StateRecorder, nextEvent, randomRoot } from '../../helpers';
import { useZooKeeper } from '../../fixture';

describe('SharedValue', () => {
  let path: string;
  const values: SharedValue[] = [];

  const zk = useZooKeeper({
    beforeClose: () => {
      for (const v of values.splice(0)) v.close();
    },
  });
  beforeEach(() => {
    path = `${randomRoot('value')}/flags`;
  });

  const connect = () => zk.clients.connect({ connectString: zk.server.connectString });
  const made = (client: ZkClient, seed: Buffer | string) => {
    const value = new SharedValue(client, path, seed);
    values.push(value);
    return value;
  };
  const started = async (client: ZkClient, seed: Buffer | string) => {
    const value = made(client, seed);
    await value.start();
    return value;
  };
  const changedTo = (value: SharedValue, text: string) =>
    nextEvent<number>((done) => value.on('changed', (bytes, version) => bytes.toString() === text && done(version)), `the value ${text}`);

  it('start() seeds a missing node with the bytes as they are, and keeps an existing one', async () => {
    const a = await connect();
    const first = await started(a, Buffer.from([0, 1, 0xff]));
    expect(first.getVersionedValue()).toEqual({ value: Buffer.from([0, 1, 0xff]), version: 0 });
    expect((await a.getData(path)).data).toEqual(Buffer.from([0, 1, 0xff]));
    const second = await started(a, 'other');
    expect(second.getValue()).toEqual(Buffer.from([0, 1, 0xff]));
    // An empty seed is a value like any other.
    path = `${path}-empty`;
    expect((await started(a, Buffer.alloc(0))).getVersionedValue()).toEqual({ value: Buffer.alloc(0), version: 0 });
  });

  it('hands out copies: changing a buffer given or got changes nothing shared', async () => {
    const a = await connect();
    const seed = Buffer.from('abc');
    const value = made(a, seed);
    seed[0] = 0x7a;
    await value.start();
    value.getValue()[0] = 0x7a;
    value.getVersionedValue().value[0] = 0x7a;
    expect(value.getValue().toString()).toBe('abc');
    const next = Buffer.from('def');
    const set = value.setValue(next);
    next[0] = 0x7a;
    await set;
    expect(value.getValue().toString()).toBe('def');
    expect((await a.getData(path)).data.toString()).toBe('def');
  });

  it("tells 'changed' listeners of other sessions' updates; trySetValue writes at the version seen", async () => {
    const writer = await started(await connect(), 'one');
    const reader = await started(await connect(), 'one');

    const seen = changedTo(reader, 'two');
    await writer.setValue('two');
    expect(await seen).toBe(1);
    expect(reader.getVersionedValue()).toEqual({ value: Buffer.from('two'), version: 1 });

    // The watch is set again after each fire.
    const again = changedTo(reader, 'three');
    expect(await writer.trySetValue(writer.getVersionedValue(), 'three')).toBe(true);
    expect(writer.getVersionedValue()).toEqual({ value: Buffer.from('three'), version: 2 });
    expect(await again).toBe(2);
  });

  it('trySetValue resolves false when the version moved on, and the value seen is then the newer one', async () => {
    const a = await connect();
    const b = await connect();
    const value = await started(a, 'v0');
    const before = value.getVersionedValue();
    // Written by another session just before: this object's watch has not caught up, so the
    // server refuses the version, and the answer comes with the newer value.
    await b.setData(path, 'v1');
    expect(await value.trySetValue(before, 'mine')).toBe(false);
    expect(value.getVersionedValue()).toEqual({ value: Buffer.from('v1'), version: 1 });
    expect((await b.getData(path)).data.toString()).toBe('v1');
    // Tried again with what it saw, it wins.
    expect(await value.trySetValue(value.getVersionedValue(), 'mine')).toBe(true);
    expect((await b.getData(path)).data.toString()).toBe('mine');
  });

  it("trySetValue refuses a stale previous without writing: an older version, or the version seen with other bytes (Curator's check)", async () => {
    const a = await connect();
    const value = await started(a, 'v0');
    await value.setValue('v1');
    expect(await value.trySetValue({ value: Buffer.from('v0'), version: 0 }, 'x')).toBe(false);
    expect(await value.trySetValue({ value: Buffer.from('not v1'), version: 1 }, 'x')).toBe(false);
    const { data, stat } = await a.getData(path);
    expect([data.toString(), stat.version]).toEqual(['v1', 1]);
  });

  it('follows the node through a delete and a re-create: the new value is seen, and trySetValue works on the new node', async () => {
    const a = await connect();
    const b = await connect();
    const value = await started(a, 'first');
    await value.setValue('second');
    expect(value.getVersionedValue().version).toBe(1);

    const recreated = changedTo(value, 'reborn');
    await b.delete(path);
    await b.create(path, { data: 'reborn' });
    // The new node's version starts again at 0, and it is still a newer value.
    expect(await recreated).toBe(0);
    expect(await value.trySetValue(value.getVersionedValue(), 'after')).toBe(true);
    expect((await b.getData(path)).data.toString()).toBe('after');
  });

  it('keeps its value through SUSPENDED and LOST, and in the new session reads and watches the node again', async () => {
    await using proxy = await FaultProxy.start(zk.server.connectString);
    const cut = await zk.clients.connect({ connectString: proxy.connectString, sessionTimeoutMs: 4_000 });
    const states = new StateRecorder(cut);
    const value = await started(cut, 'before');
    const other = await connect();

    const mark = states.mark();
    proxy.blackhole();
    await other.setData(path, 'meanwhile');
    await states.waitFor('SUSPENDED', mark);
    expect(value.getValue().toString()).toBe('before');
    await states.waitFor('LOST', mark);
    expect(value.getValue().toString()).toBe('before');

    const caughtUp = changedTo(value, 'meanwhile');
    proxy.heal();
    expect(await caughtUp).toBe(1);
    // Watched again in the new session.
    const later = changedTo(value, 'later');
    await other.setData(path, 'later');
    expect(await later).toBe(2);
  });

  it('refuses bad input before any I/O, and calls before start() or after close()', async () => {
    const a = await connect();
    expect(() => new SharedValue(a, path, undefined as unknown as Buffer)).toThrow(InvalidArgumentError);
    expect(() => new SharedValue(a, path, 42 as unknown as Buffer)).toThrow(InvalidArgumentError);
    expect(() => new SharedValue(a, 'no-slash', 'x')).toThrow(InvalidArgumentError);
    expect(() => new SharedValue({} as ZkClient, path, 'x')).toThrow(InvalidArgumentError);

    const value = made(a, 'x');
    await expect(value.setValue('y')).rejects.toThrow(IllegalStateError);
    await value.start();
    await expect(value.setValue(null as unknown as Buffer)).rejects.toThrow(InvalidArgumentError);
    await expect(value.setValue(Buffer.alloc(2 * 1024 * 1024))).rejects.toThrow(InvalidArgumentError);
    await expect(value.trySetValue(null as unknown as VersionedValue, 'y')).rejects.toThrow(InvalidArgumentError);
    await expect(value.trySetValue({ value: Buffer.from('x'), version: 1.5 }, 'y')).rejects.toThrow(InvalidArgumentError);
    await expect(value.trySetValue({ version: 0 } as VersionedValue, 'y')).rejects.toThrow(InvalidArgumentError);
    const { data, stat } = await a.getData(path);
    expect([data.toString(), stat.version]).toEqual(['x', 0]);
    await expect(value.start()).rejects.toThrow(IllegalStateError);
    value.close();
    value.close();
    await expect(value.setValue('y')).rejects.toThrow(IllegalStateError);
  });
});
