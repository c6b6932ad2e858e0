import { InvalidArgumentError, Perms, ZkClient } from '..';
import { RetryNTimes } from '../retry';
import { FakeZooKeeper } from '../../test/FakeTransport';
import { OPEN_ACL, type ACL } from '../transport/Transport';
import { aclsFrom } from './acls';

const MINE: readonly ACL[] = [{ perms: Perms.ALL, scheme: 'digest', id: 'me:hash' }];

describe('aclsFrom', () => {
  it('gives the open ACL without a provider', () => {
    expect(aclsFrom(undefined)('/a')).toBe(OPEN_ACL);
  });

  it("asks the provider for the path, and takes its default when it gives null or undefined, as Curator's ACLing does", () => {
    const asked: string[] = [];
    const other: readonly ACL[] = [{ perms: Perms.READ, scheme: 'world', id: 'anyone' }];
    const aclFor = aclsFrom({
      getDefaultAcl: () => MINE,
      getAclForPath: (path) => {
        asked.push(path);
        return path === '/null' ? null : path === '/undefined' ? undefined : other;
      },
    });
    expect(aclFor('/null')).toBe(MINE);
    expect(aclFor('/undefined')).toBe(MINE);
    expect(aclFor('/x')).toBe(other);
    expect(asked).toEqual(['/null', '/undefined', '/x']);
  });

  it('refuses an ACL the server would refuse (empty, or a bad entry) with InvalidArgumentError', () => {
    for (const bad of [[], [{ perms: 64, scheme: 'world', id: 'anyone' }], [{ perms: 1, scheme: 'world' }], 'open']) {
      const aclFor = aclsFrom({ getDefaultAcl: () => MINE, getAclForPath: () => bad as never });
      expect(() => aclFor('/a')).toThrow(InvalidArgumentError);
    }
  });
});

describe('a client with an aclProvider whose ACL is bad', () => {
  it('rejects create, ensurePath and a transaction with InvalidArgumentError before any I/O', async () => {
    const zk = new FakeZooKeeper();
    const client = new ZkClient({
      connectString: '127.0.0.1:2181',
      connectionTimeoutMs: 200,
      retryPolicy: new RetryNTimes({ n: 1, sleepMsBetweenRetries: 1 }),
      transportFactory: zk.factory(true),
      namespace: 'app',
      aclProvider: { getDefaultAcl: () => MINE, getAclForPath: () => [] },
    });
    client.start();
    await client.blockUntilConnected({ timeoutMs: 1_000 });
    const before = zk.calls.length;
    await expect(client.create('/a/b', { createParents: 'persistent' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client.ensurePath('/a/b')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client.transaction().create('/t').commit()).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(zk.calls.slice(before)).toEqual([]);
    await client.close();
  });
});
