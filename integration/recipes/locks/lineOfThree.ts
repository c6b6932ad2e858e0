import { InterProcessMutex } from '../../../recipes/locks';
import type { ZkClient } from '../../../src';
import type { TestingServer } from '../../../src/testing';
import { eventually, isWatching, timing } from '../../helpers';

/**
 * A holder, a waiter behind it, and a third waiter behind that one, each on its own client from
 * `connect` (the third's with `thirdOptions`); resolves once the third watches the second's node.
 * The second may be given a signal, to give up with.
 */
export async function lineOfThree<O>(
  server: TestingServer,
  connect: (options?: O) => Promise<ZkClient>,
  path: string,
  { secondSignal, thirdOptions }: { secondSignal?: AbortSignal; thirdOptions?: O } = {},
) {
  const [a, b, c] = [await connect(), await connect(), await connect(thirdOptions)];
  const first = await new InterProcessMutex(a, path).acquire({ timeoutMs: timing(10_000) });
  const second = new InterProcessMutex(b, path).acquire({ timeoutMs: timing(20_000), signal: secondSignal });
  second.catch(() => undefined);
  await eventually('the second to watch the first', () => isWatching(server, first.node, b.sessionId));
  const third = new InterProcessMutex(c, path).acquire({ timeoutMs: timing(20_000) });
  third.catch(() => undefined);
  const nodes = await eventually('three nodes', async () => {
    const all = await new InterProcessMutex(a, path).getParticipantNodes();
    return all.length === 3 ? all : undefined;
  });
  await eventually('the third to watch the second', () => isWatching(server, nodes[1], c.sessionId));
  return { a, b, c, first, second, third, nodes };
}
