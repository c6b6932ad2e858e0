/**
 * A failed call's error carries the stack of the code that made the call (the native binding's
 * ends inside the binding): server errors and connection losses alike, through ZkClient.
 */
import { randomRoot } from '../helpers';
import { useZooKeeper } from '../fixture';

describe('errors keep the caller in their stack', () => {
  const zk = useZooKeeper({ closeClients: 'file' });

  it("a server error (NONODE) names the function that awaited the call", async () => {
    const client = await zk.clients.connect({ transport: 'protocol', connectString: zk.server.connectString });
    async function readTheMissingNode(): Promise<void> {
      await client.getData(`${randomRoot()}/missing`);
    }
    const err = await readTheMissingNode().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toMatchObject({ code: 'NONODE' });
    expect(err?.stack).toContain('readTheMissingNode');
    expect(err?.stack).toContain('stacks.protocol.test.ts');
  });

  it('so does a create that finds its node there (NODEEXISTS), and a version mismatch (BADVERSION)', async () => {
    const client = await zk.clients.connect({ transport: 'protocol', connectString: zk.server.connectString });
    const root = randomRoot();
    await client.create(root);
    async function createItAgain(): Promise<void> {
      await client.create(root);
    }
    async function writeAnOldVersion(): Promise<void> {
      await client.setData(root, 'x', { version: 7 });
    }
    for (const [fn, code] of [
      [createItAgain, 'NODEEXISTS'],
      [writeAnOldVersion, 'BADVERSION'],
    ] as const) {
      const err = await fn().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err).toMatchObject({ code });
      expect(err?.stack).toContain(fn.name);
    }
  });
});
