/**
 * The place-in-line core (recipes/locks/Contender.ts) where a recipe's own tests do not reach it
 * directly: a line shared by clients that compress their data and clients that do not.
 */
import { Contender } from '../../../recipes/locks/Contender';
import { eventually, isWatching, randomRoot } from '../../helpers';
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

  describe('the listing a wake-up needs, sent when the node ahead goes', () => {
    async function line() {
      const parent = `${randomRoot('line')}/line`;
      const [client, peer] = [await connect(), await connect()];
      const { contender: first } = await Contender.join(peer, parent, `${parent}/lock-`, { mode: 'EPHEMERAL_SEQUENTIAL' });
      const { contender: second } = await Contender.join(client, parent, `${parent}/lock-`, { mode: 'EPHEMERAL_SEQUENTIAL' });
      const listings = jest.spyOn(client, 'getChildrenOfBuilt');
      const watched = () => eventually('the watch on the node ahead', () => isWatching(zk.server, first.path, client.sessionId));
      return { first, second, listings, watched };
    }

    it('with relist, is sent from the deletion and taken by the next list(), which sends nothing more', async () => {
      const { first, second, listings, watched } = await line();
      const gone = second.untilGone(first.name, undefined, { relist: true });
      await watched();
      expect(listings).not.toHaveBeenCalled();
      await first.leave();
      await expect(gone).resolves.toBe('deleted');
      expect(listings).toHaveBeenCalledTimes(1);
      expect((await second.list(undefined)).children).toEqual([second.name]);
      expect(listings).toHaveBeenCalledTimes(1);
      // Taken once: the next list() reads again.
      await second.list(undefined);
      expect(listings).toHaveBeenCalledTimes(2);
      await second.leave();
    });

    it('without relist, is not sent: the wake-up is settled without one', async () => {
      const { first, second, listings, watched } = await line();
      const gone = second.untilGone(first.name, undefined);
      await watched();
      await first.leave();
      await expect(gone).resolves.toBe('deleted');
      expect(listings).not.toHaveBeenCalled();
      await second.leave();
    });

    it("is sent for a node ahead found 'missing', relist or not", async () => {
      const { first, second, listings } = await line();
      await first.leave();
      await expect(second.untilGone(first.name, undefined)).resolves.toBe('missing');
      expect(listings).toHaveBeenCalledTimes(1);
      expect((await second.list(undefined)).children).toEqual([second.name]);
      expect(listings).toHaveBeenCalledTimes(1);
      await second.leave();
    });
  });
});
