import { controllersBuiltBy } from '../helpers';
import { useZooKeeper } from '../fixture';

describe('an idle session', () => {
  const zk = useZooKeeper();

  it('builds no AbortController until someone asks for its signal, which then aborts when it ends', async () => {
    const { built, value: client } = await controllersBuiltBy(async () => {
      const c = await zk.connect();
      await c.exists('/');
      return c;
    });
    expect(built).toBe(0);
    const session = client.session;
    if (session === undefined) throw new Error('the client has no session');
    const { signal } = session;
    expect(signal.aborted).toBe(false);
    expect(session.signal).toBe(signal);
    await client.close();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(session.endReason);
    expect(session.closedByClient).toBe(true);
  });
});
