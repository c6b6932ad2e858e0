/**
 * The place-in-line core (recipes/locks/Contender.ts) where a recipe's own tests do not reach it
 * directly: a line shared by clients that compress their data and clients that do not.
 */
import { Contender } from '../../../recipes/locks/Contender';
import { randomRoot } from '../../helpers';
import { useZooKeeper } from '../../fixture';

describe('Contender', () => {
  const zk = useZooKeeper();
  const connect = (enableCompression = false) => zk.clients.connect({ connectString: zk.server.connectString, enableCompression });

  it('watches the node ahead as stored: a client that compresses waits behind a peer that does not', async () => {
    const parent = `${randomRoot('line')}/line`;
    const [plain, compressing] = [await connect(), await connect(true)];
    const { contender: first } = await Contender.join(plain, parent, `${parent}/latch-`, { mode: 'EPHEMERAL_SEQUENTIAL', data: 'first' });
    const { contender: second } = await Contender.join(compressing, parent, `${parent}/latch-`, { mode: 'EPHEMERAL_SEQUENTIAL', data: 'second' });
    let onDeleted!: () => void;
    const deleted = new Promise<void>((resolve) => (onDeleted = resolve));
    const ended: unknown[] = [];
    const watch = second.watchAhead(first.name, onDeleted, (reason) => ended.push(reason), undefined);
    // What the first wrote, read as it is (not compressed data, which the client would reject).
    expect((await watch.start())?.data.toString('utf8')).toBe('first');
    await first.leave();
    await deleted;
    expect(ended).toEqual([]);
    await second.leave();
  });
});
