import { once } from 'node:events';
import { connect } from 'node:net';
import { emittersBuiltBy } from '../helpers';
import { useZooKeeper } from '../fixture';

describe('an idle session on the protocol transport', () => {
  const zk = useZooKeeper();

  it('builds no EventEmitter but the client and its socket', async () => {
    // What Node builds for a socket alone, connected to the same server.
    const forSocket = await emittersBuiltBy(async () => {
      const [host, port] = zk.server.connectString.split(':');
      const socket = connect({ host, port: Number(port) });
      await once(socket, 'connect');
      socket.destroy();
    });
    expect(forSocket.built).toBeGreaterThan(0);
    const { built } = await emittersBuiltBy(async () => {
      const client = await zk.connect();
      await client.exists('/');
      return client;
    });
    // The transport keeps its few listeners without an emitter: one each of ten thousand sessions adds up.
    expect(built).toBe(1 + forSocket.built);
  });
});
