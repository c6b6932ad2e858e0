/**
 * Starts an embedded ZooKeeper server with the testing harness, connects a client to it, and shows
 * connection states, a protected ephemeral sequential create, a watch and a server restart.
 *
 *   npm run example
 */
import { ZkClient } from '../src';
import { TestingServer } from '../src/testing';

async function main(): Promise<void> {
  await using server = await TestingServer.start({ forceSync: false });
  console.log(`ZooKeeper ${await server.mode()} server on ${server.connectString}`);

  const client = new ZkClient({ connectString: server.connectString, namespace: 'example', sessionTimeoutMs: 10_000 });
  client.on('stateChanged', (state, previous) => console.log(`state: ${previous ?? '-'} -> ${state}`));
  client.start();
  await client.blockUntilConnected({ timeoutMs: 10_000 });
  console.log(`session 0x${client.sessionId.toString(16)}, timeout ${client.negotiatedSessionTimeoutMs} ms`);

  const node = await client.create('/members/member-', {
    mode: 'EPHEMERAL_SEQUENTIAL',
    protected: true,
    createParents: 'container',
    data: 'hello',
  });
  console.log(`created ${node}`);

  const changed = new Promise<string>((resolve) => {
    void client.getData(node, { watcher: (event) => resolve(event.type) });
  });
  await client.setData(node, 'hello again');
  console.log(`watch fired: ${await changed}`);

  console.log('restarting the server: the session survives it');
  await server.restart();
  await client.blockUntilConnected({ timeoutMs: 10_000 });
  console.log(`children of /members: ${(await client.getChildren('/members')).join(', ')}`);

  await client.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
