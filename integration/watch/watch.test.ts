import { expireSession } from '../../src/testing';
import { ChildrenWatch, NodeWatch, type NodeChildren, type NodeData } from '../../src/watch';
import { eventually, isWatching, randomRoot, StateRecorder, timing } from '../helpers';
import { useZooKeeper } from '../fixture';

/** Collects a watch's values, and waits for one that matches. */
class Values<T> {
  readonly seen: Array<T | null> = [];
  private waiters: Array<{ match: (v: T | null) => boolean; resolve: (v: T | null) => void }> = [];

  readonly listener = (value: T | null) => {
    this.seen.push(value);
    for (const w of [...this.waiters]) {
      if (w.match(value)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(value);
      }
    }
  };

  next(match: (v: T | null) => boolean, what: string, timeoutMs = timing(10_000)): Promise<T | null> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${timeoutMs} ms; seen ${this.seen.length}`)), timeoutMs);
      this.waiters.push({
        match,
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
      });
    });
  }
}

const text = (v: NodeData | null) => v?.data.toString();

describe('NodeWatch and ChildrenWatch', () => {
  const watches: Array<{ close(): Promise<void> }> = [];
  const zk = useZooKeeper({ beforeClose: () => Promise.all(watches.splice(0).map((w) => w.close())) });

  const connect = () => zk.clients.connect({ connectString: zk.server.connectString });

  it('follows a node through changes, deletion and re-creation, hearing each new value once', async () => {
    const path = `${randomRoot('watch')}/node`;
    const [client, writer] = [await connect(), await connect()];
    const values = new Values<NodeData>();
    const watch = new NodeWatch(client, path, values.listener);
    watches.push(watch);
    expect(await watch.start()).toBeNull();

    const created = values.next((v) => text(v) === 'one', 'the creation');
    await writer.create(path, { data: 'one', createParents: 'persistent' });
    await created;
    const changed = values.next((v) => text(v) === 'two', 'the change');
    await writer.setData(path, 'two');
    await changed;
    const deleted = values.next((v) => v === null, 'the deletion');
    await writer.delete(path);
    await deleted;
    const recreated = values.next((v) => text(v) === 'three', 'the re-creation');
    await writer.create(path, { data: 'three' });
    await recreated;
    expect(values.seen.map(text)).toEqual(['one', 'two', undefined, 'three']);
    // One watch outstanding for this session, whatever happened.
    expect(await isWatching(zk.server, path, client.sessionId)).toBe(true);
  });

  it('without `creation`, a missing node ends the watch, and a deleted one ends it after telling', async () => {
    const path = `${randomRoot('watch')}/node`;
    const [client, writer] = [await connect(), await connect()];
    const ended: unknown[] = [];
    const missing = new NodeWatch(client, path, () => undefined, { creation: false, onEnd: (r) => ended.push(r) });
    expect(await missing.start()).toBeNull();
    expect(missing.isClosed).toBe(true);
    // No exists watch left on the missing node: it would never fire.
    expect(await isWatching(zk.server, path, client.sessionId)).toBe(false);

    await writer.create(path, { data: 'x', createParents: 'persistent' });
    const values = new Values<NodeData>();
    const watch = new NodeWatch(client, path, values.listener, { creation: false, onEnd: (r) => ended.push(r) });
    watches.push(watch);
    expect(text(await watch.start())).toBe('x');
    const gone = values.next((v) => v === null, 'the deletion');
    await writer.delete(path);
    await gone;
    expect(watch.isClosed).toBe(true);
    // The listener heard both: onEnd is for ends it was not told of.
    expect(ended).toEqual([]);
  });

  it('with `compressed: false`, a client that compresses reads a node stored uncompressed as it is', async () => {
    const path = `${randomRoot('watch')}/node`;
    const [client, writer] = [await zk.clients.connect({ connectString: zk.server.connectString, enableCompression: true }), await connect()];
    await writer.create(path, { data: 'plain', createParents: 'persistent' });
    // By default the client's compression applies: these bytes are not compressed data.
    const decompressing = new NodeWatch(client, path, () => undefined, { creation: false });
    watches.push(decompressing);
    await expect(decompressing.start()).rejects.toMatchObject({ name: 'CompressionError' });
    const values = new Values<NodeData>();
    const watch = new NodeWatch(client, path, values.listener, { creation: false, compressed: false });
    watches.push(watch);
    expect(text(await watch.start())).toBe('plain');
    const changed = values.next((v) => text(v) === 'again', 'the change');
    await writer.setData(path, 'again');
    await changed;
    const gone = values.next((v) => v === null, 'the deletion');
    await writer.delete(path);
    await gone;
  });

  it('pinned to a session, ends when the session does; unpinned, reads again in the next session', async () => {
    const path = `${randomRoot('watch')}/node`;
    const [client, writer] = [await connect(), await connect()];
    await writer.create(path, { data: 'a', createParents: 'persistent' });
    const session = client.session;
    let endReason: unknown;
    const ended = new Promise<void>((resolve) => {
      const pinned = new NodeWatch(client, path, () => undefined, {
        session,
        onEnd: (reason) => {
          endReason = reason;
          resolve();
        },
      });
      watches.push(pinned);
      void pinned.start();
    });
    const values = new Values<NodeData>();
    const follower = new NodeWatch(client, path, values.listener);
    watches.push(follower);
    await follower.start();

    await expireSession(client);
    await ended;
    expect(endReason).toMatchObject({ code: 'SESSION_LOST' });
    // The follower watches again in the new session: a change made after it is heard.
    await client.blockUntilConnected({ timeoutMs: timing(20_000) });
    const heard = values.next((v) => text(v) === 'b', 'the change in the new session');
    await writer.setData(path, 'b');
    await heard;
    expect(client.session).not.toBe(session);
  });

  it('close() stops the listener, and on the protocol transport removes the watch from the server', async () => {
    const path = `${randomRoot('watch')}/node`;
    const [client, writer] = [await connect(), await connect()];
    await writer.create(path, { data: 'a', createParents: 'persistent' });
    const values = new Values<NodeData>();
    const watch = new NodeWatch(client, path, values.listener);
    await watch.start();
    expect(await isWatching(zk.server, path, client.sessionId)).toBe(true);
    await watch.close();
    expect(await isWatching(zk.server, path, client.sessionId)).toBe(!client.supports('removeWatches'));
    // A later change reaches nobody: a second watcher that sees it proves the change was made.
    const other = new Values<NodeData>();
    const second = new NodeWatch(writer, path, other.listener);
    watches.push(second);
    await second.start();
    const seen = other.next((v) => text(v) === 'b', 'the change');
    await writer.setData(path, 'b');
    await seen;
    expect(values.seen).toEqual([]);
  });

  it('a watcher taken back while its read is in flight is removed from the server once the read answers', async () => {
    const path = `${randomRoot('watch')}/in-flight`;
    const [client, writer] = [await connect(), await connect()];
    await writer.create(path, { createParents: 'persistent' });
    const heard: string[] = [];
    const watcher = (event: { type: string }) => heard.push(event.type);
    // The read is sent now; the removal comes before its answer, which alone tells the client
    // that the server set the watch. Answered, the read proves the server set it.
    const read = client.getData(path, { watcher });
    await client.removeWatcher(path, watcher);
    await read;
    if (client.supports('removeWatches')) {
      await eventually('the watch removed', async () => !(await isWatching(zk.server, path, client.sessionId)));
    } else {
      expect(await isWatching(zk.server, path, client.sessionId)).toBe(true);
    }
    // Taken back either way: a change reaches nobody. A second watcher that hears it proves it was made.
    let changed!: () => void;
    const second = new Promise<void>((resolve) => (changed = resolve));
    await writer.getData(path, { watcher: () => changed() });
    await writer.setData(path, 'b');
    await second;
    // The client's events come in order on one session: a later read's answer follows any event for the first.
    await client.exists('/');
    expect(heard).toEqual([]);
  });

  it('a watcher taken back while disconnected is forgotten: the next connection does not set it again', async () => {
    const root = randomRoot('watch');
    const [keptPath, droppedPath] = [`${root}/kept`, `${root}/dropped`];
    const writer = await connect();
    await writer.create(keptPath, { createParents: 'persistent' });
    await writer.create(droppedPath);
    const proxy = await zk.startProxy();
    const client = await zk.clients.connect({ connectString: proxy.connectString });
    const states = new StateRecorder(client);
    const [kept, dropped] = [() => undefined, () => undefined];
    await client.getData(keptPath, { watcher: kept });
    await client.getData(droppedPath, { watcher: dropped });
    const from = states.mark();
    proxy.cut();
    await states.waitFor('SUSPENDED', from);
    await client.removeWatcher(droppedPath, dropped);
    proxy.heal();
    await states.waitFor('RECONNECTED', from);
    // The session's requests run in order: once this read is answered, the watches the new
    // connection set again are on the server.
    await client.exists('/');
    expect(await isWatching(zk.server, keptPath, client.sessionId)).toBe(true);
    // The native binding cannot remove a watch: it sets every watch it had again.
    expect(await isWatching(zk.server, droppedPath, client.sessionId)).toBe(!client.supports('removeWatches'));
  });

  it('ChildrenWatch follows children, and the parent through deletion and re-creation', async () => {
    const path = `${randomRoot('watch')}/parent`;
    const [client, writer] = [await connect(), await connect()];
    const values = new Values<NodeChildren>();
    const watch = new ChildrenWatch(client, path, values.listener);
    watches.push(watch);
    expect(await watch.start()).toBeNull();
    const names = (v: NodeChildren | null) => (v === null ? null : [...v.children].sort().join(','));
    let next = values.next((v) => names(v) === '', 'the parent');
    await writer.create(path, { createParents: 'persistent' });
    await next;
    next = values.next((v) => names(v) === 'a,b', 'two children');
    await Promise.all([writer.create(`${path}/a`), writer.create(`${path}/b`)]);
    await next;
    next = values.next((v) => v === null, 'the parent gone');
    await writer.delete(path, { recursive: true });
    await next;
    next = values.next((v) => names(v) === 'c', 'a child under the new parent');
    await writer.create(`${path}/c`, { createParents: 'persistent' });
    await next;
  });
});
