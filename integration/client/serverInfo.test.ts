/**
 * The client's reads past the core set: multiRead, getEphemerals, getAllChildrenNumber, whoAmI,
 * with the namespace applied. The protocol transport sends them; the native binding has no such
 * calls, and there each test checks that the call rejects with UnsupportedError naming the
 * protocol transport.
 */
import { InvalidArgumentError, NodeError, UnsupportedError, isZkError, type ZkClient } from '../../src';
import { TEST_TRANSPORT, randomRoot } from '../helpers';
import { useZooKeeper } from '../fixture';

/**
 * On the native transport: checks that `call` rejects with UnsupportedError naming the protocol
 * transport, and returns true (the test has nothing more to check there); false on the protocol one.
 */
async function unsupportedOnNative(name: string, call: () => Promise<unknown>): Promise<boolean> {
  if (TEST_TRANSPORT !== 'native') return false;
  const err = await call().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(UnsupportedError);
  expect((err as Error).message).toBe(`${name} needs the protocol transport (transport: 'protocol', the default): the native binding has no such call`);
  return true;
}

describe('ZkClient server reads', () => {
  let client: ZkClient;
  let root: string;

  const zk = useZooKeeper();
  beforeEach(async () => {
    client = await zk.clients.connect({ connectString: zk.server.connectString });
    root = randomRoot();
    await client.create(root);
  });

  it('rejects bad input before any I/O, on either transport', async () => {
    await expect(client.multiRead([])).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client.multiRead([{ type: 'exists', path: root } as never])).rejects.toThrow("read 0 must be { type: 'getData' | 'getChildren', path }");
    await expect(client.multiRead([{ type: 'getData', path: 'relative' }])).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client.getEphemerals('no-slash')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client.getAllChildrenNumber(`${root}/`)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client.whoAmI({ signal: 'no' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('multiRead: each read on its own, a missing node an error result with its path', async () => {
    if (await unsupportedOnNative('multiRead', () => client.multiRead([{ type: 'getData', path: root }]))) return;
    await client.create(`${root}/config`, { data: '{"a":1}' });
    await client.create(`${root}/workers/w1`, { createParents: 'persistent' });
    await client.create(`${root}/workers/w2`);
    const [config, workers, missing] = await client.multiRead([
      { type: 'getData', path: `${root}/config` },
      { type: 'getChildren', path: `${root}/workers` },
      { type: 'getData', path: `${root}/missing` },
    ]);
    expect(config).toMatchObject({ type: 'getData', data: Buffer.from('{"a":1}') });
    expect(config.type === 'getData' && config.stat.version).toBe(0);
    expect(workers.type === 'getChildren' && [...workers.children].sort()).toEqual(['w1', 'w2']);
    expect(missing.type).toBe('error');
    const error = missing.type === 'error' ? missing.error : undefined;
    expect(error).toBeInstanceOf(NodeError);
    expect(error).toMatchObject({ code: 'NONODE', path: `${root}/missing` });
  });

  it('getEphemerals: this session’s ephemeral nodes by prefix, and no one else’s', async () => {
    if (await unsupportedOnNative('getEphemerals', () => client.getEphemerals(root))) return;
    const other = await zk.clients.connect({ connectString: zk.server.connectString });
    await client.create(`${root}/locks/a1`, { mode: 'EPHEMERAL', createParents: 'persistent' });
    await client.create(`${root}/locks/b1`, { mode: 'EPHEMERAL' });
    await client.create(`${root}/persistent`);
    await other.create(`${root}/locks/a2`, { mode: 'EPHEMERAL' });
    expect((await client.getEphemerals(root)).sort()).toEqual([`${root}/locks/a1`, `${root}/locks/b1`]);
    // A prefix of the path's text, as the server matches it.
    expect(await client.getEphemerals(`${root}/locks/a`)).toEqual([`${root}/locks/a1`]);
    expect(await other.getEphemerals(root)).toEqual([`${root}/locks/a2`]);
    expect(await client.getEphemerals(`${root}/none`)).toEqual([]);
    expect(await client.getEphemerals()).toEqual(expect.arrayContaining([`${root}/locks/a1`, `${root}/locks/b1`]));
  });

  it('getAllChildrenNumber: every node below, all levels down', async () => {
    if (await unsupportedOnNative('getAllChildrenNumber', () => client.getAllChildrenNumber(root))) return;
    await client.create(`${root}/a/b/c`, { createParents: 'persistent' });
    await client.create(`${root}/d`, { mode: 'EPHEMERAL' });
    expect(await client.getAllChildrenNumber(root)).toBe(4);
    expect(await client.getAllChildrenNumber(`${root}/a/b/c`)).toBe(0);
    const missing = await client.getAllChildrenNumber(`${root}/missing`).catch((e: unknown) => e);
    expect(isZkError(missing, 'NONODE')).toBe(true);
    expect(missing).toMatchObject({ path: `${root}/missing` });
  });

  it('whoAmI: the address, and each identity added', async () => {
    if (await unsupportedOnNative('whoAmI', () => client.whoAmI())) return;
    expect(await client.whoAmI()).toEqual([{ scheme: 'ip', id: '127.0.0.1' }]);
    const alice = await zk.clients.connect({ connectString: zk.server.connectString, authInfo: [{ scheme: 'digest', auth: 'alice:secret' }] });
    expect(await alice.whoAmI()).toEqual(expect.arrayContaining([{ scheme: 'ip', id: '127.0.0.1' }, { scheme: 'digest', id: 'alice' }]));
  });

  it('applies the namespace: paths in, paths out', async () => {
    if (await unsupportedOnNative('getEphemerals', () => client.getEphemerals())) return;
    const namespace = randomRoot('ns').slice(1);
    const ns = await zk.clients.connect({ connectString: zk.server.connectString, namespace });
    await ns.create('/jobs/j1', { mode: 'EPHEMERAL', createParents: 'persistent', data: 'x' });
    await ns.create('/jobs/j2', { mode: 'EPHEMERAL' });
    expect((await ns.getEphemerals()).sort()).toEqual(['/jobs/j1', '/jobs/j2']);
    expect(await ns.getEphemerals('/jobs/j1')).toEqual(['/jobs/j1']);
    expect(await ns.getAllChildrenNumber('/')).toBe(3);
    const [data, children] = await ns.multiRead([
      { type: 'getData', path: '/jobs/j1' },
      { type: 'getChildren', path: '/' },
    ]);
    expect(data).toMatchObject({ type: 'getData', data: Buffer.from('x') });
    expect(children).toEqual({ type: 'getChildren', children: ['jobs'] });
    // What the server holds, seen from outside the namespace.
    expect(await client.getData(`/${namespace}/jobs/j1`)).toMatchObject({ data: Buffer.from('x') });
    expect(await client.getEphemerals(`/${namespace}`)).toEqual([]);
  });
});
