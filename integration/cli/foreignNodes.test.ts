/**
 * The CLI over nodes that no recipe made: foreign lock nodes it must count as the mutex does, and
 * names and data holding Unicode format characters it must not print raw.
 */
import { InterProcessMutex } from '../../recipes/locks';
import type { LocksReport } from '../../cli/locks';
import type { ZkClient } from '../../src';
import { childrenOf, eventually, randomRoot, timing } from '../helpers';
import { useZooKeeper } from '../fixture';
import { cli, cliJson } from './cliTesting';

describe('zk-recipes CLI with foreign nodes', () => {
  const zk = useZooKeeper({ closeClients: 'file' });
  let client: ZkClient;
  let connect: string[];

  beforeAll(async () => {
    client = await zk.clients.connect({ connectString: zk.server.connectString });
    connect = ['--connect', zk.server.connectString];
  });

  it('locks names the holder the mutex waits behind, a foreign `zzz-lock-0` among other children', async () => {
    const path = `${randomRoot('cli')}/mutex`;
    await client.create(`${path}/zzz-lock-0`, { data: 'foreign', createParents: 'persistent' });
    await client.create(`${path}/config`, { data: 'not a lock node' });
    const mutex = new InterProcessMutex(client, path, { data: 'ours' });
    const pending = mutex.acquire({ timeoutMs: timing(60_000) });
    pending.catch(() => undefined);
    await eventually('our lock node', async () => (await childrenOf(client, path)).length === 3);

    // The mutex waits behind the foreign node: it is first among the participants.
    const participants = await mutex.getParticipantNodes();
    expect(participants).toHaveLength(2);
    expect(participants[0]).toBe(`${path}/zzz-lock-0`);
    const report = await cliJson<LocksReport>(['locks', path, ...connect]);
    expect(report).toMatchObject({ recipe: 'mutex', others: 1 });
    expect(report.holders.map((n) => n.path)).toEqual([participants[0]]);
    expect(report.waiting.map((n) => n.path)).toEqual([participants[1]]);
    expect((await cli(['locks', path, ...connect])).stdout).toMatch(/holder\s+zzz-lock-0 /);

    // And the mutex gets the lock once that node goes, as the CLI's line said it would.
    await client.delete(`${path}/zzz-lock-0`);
    const lease = await pending;
    expect((await cliJson<LocksReport>(['locks', path, ...connect])).holders.map((n) => n.path)).toEqual([participants[1]]);
    await lease.release();
  });

  it('prints bidi and format characters of names and data as escapes, in text and in JSON', async () => {
    const root = randomRoot('cli');
    // A lock node, so that `locks` shows its data as well as its name.
    const name = 'invoice\u202efdp.exe\u200b-lock-0000000001';
    const data = 'line\u2028two\u2029\u2066x\u2069\ufeff\u200e\u200f';
    await client.create(`${root}/${name}`, { data, createParents: 'persistent' });
    const hostile = /[\u202e\u2028\u2029\u200b\u200e\u200f\u2066-\u2069\ufeff]/;

    for (const view of ['tree', 'locks']) {
      const text = await cli([view, root, ...connect]);
      expect(text.code).toBe(0);
      expect(text.stdout).not.toMatch(hostile);
      expect(text.stdout).toContain('invoice\\u202efdp.exe\\u200b-lock-0000000001');
    }
    expect((await cli(['locks', root, ...connect])).stdout).toContain('"line\\u2028two\\u2029\\u2066x\\u2069\\ufeff\\u200e\\u200f"');

    const json = await cli(['locks', root, ...connect, '--json']);
    expect(json.stdout).not.toMatch(hostile);
    // The escapes are JSON's own: the report reads back with the name and the data as they are.
    const report = JSON.parse(json.stdout) as LocksReport;
    expect(report.holders[0]).toMatchObject({ name, data: { encoding: 'utf8', value: data } });

    // An error naming such a child escapes it too.
    await client.create(`${root}/plain/\u202econfig`, { createParents: 'persistent' });
    const wrong = await cli(['queue', `${root}/plain`, ...connect]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('(children: \\u202econfig)');
    expect(wrong.stderr).not.toMatch(hostile);
  });
});
