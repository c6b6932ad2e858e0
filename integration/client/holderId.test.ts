import { hostname } from 'node:os';
import { InterProcessMutex } from '../../recipes/locks';
import { randomRoot } from '../helpers';
import { useZooKeeper } from '../fixture';

describe('the holder id in lock nodes', () => {

  const zk = useZooKeeper();

  it('is <hostname>:<pid> by default, so a lock node says which process holds it', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString });
    const lease = await new InterProcessMutex(client, `${randomRoot()}/lock`).acquire();
    expect((await client.getData(lease.node)).data.toString('utf8')).toBe(`${hostname()}:${process.pid}`);
    await lease.release();
  });

  it('is the client id option when given', async () => {
    const client = await zk.clients.connect({ connectString: zk.server.connectString, id: 'orders-worker-3' });
    const lease = await new InterProcessMutex(client, `${randomRoot()}/lock`).acquire();
    expect((await client.getData(lease.node)).data.toString('utf8')).toBe('orders-worker-3');
    await lease.release();
  });
});
