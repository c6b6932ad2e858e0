import { useZooKeeper } from '../fixture';

/**
 * Counts the AbortControllers built while `work` runs. Our code builds them with the global
 * constructor, so a counting subclass in its place sees every one.
 */
async function controllersBuiltBy<T>(work: () => Promise<T>): Promise<{ built: number; value: T }> {
  const Original = globalThis.AbortController;
  let built = 0;
  globalThis.AbortController = class extends Original {
    constructor() {
      super();
      built++;
    }
  };
  try {
    return { value: await work(), built };
  } finally {
    globalThis.AbortController = Original;
  }
}

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
