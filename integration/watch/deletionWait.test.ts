import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { METRICS_CHANNELS, type OperationEvent } from '../../src/metrics';
import { expireSession } from '../../src/testing';
import { DeletionWait } from '../../src/watch/DeletionWait';
import { eventually, isWatching, randomRoot, settledYet, timing } from '../helpers';
import { useZooKeeper } from '../fixture';
import { InstrumentedTransports } from '../instrumentedTransports';

describe('DeletionWait', () => {
  const zk = useZooKeeper();
  const connect = () => zk.clients.connect({ connectString: zk.server.connectString });

  async function node(data = 'a'): Promise<string> {
    const path = `${randomRoot('deletion')}/node`;
    const writer = await connect();
    await writer.create(path, { data, createParents: 'persistent' });
    return path;
  }

  it("is 'missing' for a node that is gone already, and leaves no watch on the server", async () => {
    const client = await connect();
    const path = `${randomRoot('deletion')}/never`;
    await expect(new DeletionWait(client, path, client.session!, undefined).done).resolves.toBe('missing');
    expect(await isWatching(zk.server, path, client.sessionId)).toBe(false);
  });

  it("is 'deleted' when the node goes, and reads again, watching anew, on each change before that", async () => {
    const path = await node();
    const [client, writer] = [await connect(), await connect()];
    const wait = new DeletionWait(client, path, client.session!, undefined);
    await eventually('the first watch', () => isWatching(zk.server, path, client.sessionId));
    for (const data of ['b', 'c']) {
      // The change fires the one-shot watch on the server before setData returns: a watch seen
      // after it is the wait's new one, set by its read again.
      await writer.setData(path, data);
      await eventually(`the watch set again after the change to ${data}`, () => isWatching(zk.server, path, client.sessionId));
      expect(await settledYet(wait.done)).toBe(false);
    }
    await writer.delete(path);
    await expect(wait.done).resolves.toBe('deleted');
  });

  it('rejects with SESSION_LOST when its session ends, though the node stands', async () => {
    const path = await node();
    const client = await connect();
    const wait = new DeletionWait(client, path, client.session!, undefined);
    await eventually('the watch', () => isWatching(zk.server, path, client.sessionId));
    // Listened to before the expiry: the client may hear of it before expireSession returns.
    const rejected = expect(wait.done).rejects.toMatchObject({ code: 'SESSION_LOST' });
    await expireSession(client);
    await rejected;
  });

  it("rejects with the signal's reason on abort, and takes its watch off the server where the transport can", async () => {
    const path = await node();
    const client = await connect();
    const controller = new AbortController();
    // The watch is the client's once its read has answered: the server holds it a little before
    // (the reply may still be on its way), and a removal then finds nothing here to remove.
    let answered!: () => void;
    const read = new Promise<void>((resolve) => (answered = resolve));
    const wait = new DeletionWait(client, path, client.session!, controller.signal, { onRead: () => answered() });
    await read;
    expect(await isWatching(zk.server, path, client.sessionId)).toBe(true);
    const reason = new Error('stop waiting');
    controller.abort(reason);
    await expect(wait.done).rejects.toBe(reason);
    if (client.supports('removeWatches')) {
      await eventually('the watch removed', async () => !(await isWatching(zk.server, path, client.sessionId)), timing(10_000));
    }
  });

  it('takes its watch off the server also when aborted while its read is in flight', async () => {
    const path = await node();
    const client = await connect();
    // The read's answer, heard from the client's metrics: it settles the read whatever the wait does.
    let answered!: (code: string | undefined) => void;
    const readAnswered = new Promise<string | undefined>((resolve) => (answered = resolve));
    const onOperation = (message: unknown) => {
      const event = message as OperationEvent;
      if (event.operation === 'getData' && event.path === path) answered(event.code);
    };
    subscribe(METRICS_CHANNELS.operation, onOperation);
    try {
      const controller = new AbortController();
      const wait = new DeletionWait(client, path, client.session!, controller.signal);
      // In the same turn as the read's send: its answer cannot have been read yet.
      const reason = new Error('stop waiting');
      controller.abort(reason);
      await expect(wait.done).rejects.toBe(reason);
      // The node stands: answered without an error, the read set the watch on the server.
      expect(await readAnswered).toBeUndefined();
    } finally {
      unsubscribe(METRICS_CHANNELS.operation, onOperation);
    }
    if (client.supports('removeWatches')) {
      await eventually('the watch removed', async () => !(await isWatching(zk.server, path, client.sessionId)), timing(10_000));
    }
  });

  it('rejects at once, with no read, for a signal aborted already or a session ended already', async () => {
    const path = await node();
    const client = await connect();
    const reason = new Error('aborted before');
    await expect(new DeletionWait(client, path, client.session!, AbortSignal.abort(reason)).done).rejects.toBe(reason);
    const session = client.session!;
    // Listened to before the expiry: a client that has not yet heard of it is still connected, in
    // the old session, as far as it knows.
    const ended = new Promise<void>((resolve) => session.onEnd(resolve));
    await expireSession(client);
    await ended;
    await client.blockUntilConnected({ timeoutMs: timing(20_000) });
    expect(session.isEnded).toBe(true);
    await expect(new DeletionWait(client, path, session, undefined).done).rejects.toMatchObject({ code: 'SESSION_LOST' });
    expect(await isWatching(zk.server, path, client.sessionId)).toBe(false);
  });

  it('waits behind a node whose data is not compressed, with enableCompression', async () => {
    const path = await node('not compressed');
    const [client, writer] = [await zk.clients.connect({ connectString: zk.server.connectString, enableCompression: true }), await connect()];
    const wait = new DeletionWait(client, path, client.session!, undefined);
    await eventually('the watch', () => isWatching(zk.server, path, client.sessionId));
    // A change makes the wait read again; that read, too, takes the bytes as they are.
    await writer.setData(path, 'still not compressed');
    await eventually('the watch set again', () => isWatching(zk.server, path, client.sessionId));
    expect(await settledYet(wait.done)).toBe(false);
    await writer.delete(path);
    await expect(wait.done).resolves.toBe('deleted');
  });

  it('tells onChange of each change but the deletion, before it reads again', async () => {
    const path = await node();
    const writer = await connect();
    const traced = new InstrumentedTransports();
    const client = await zk.clients.connect({ connectString: zk.server.connectString, transportFactory: traced.factory });
    // How many reads of the node were sent when each change was told.
    const readsAtChange: number[] = [];
    const wait = new DeletionWait(client, path, client.session!, undefined, {
      onChange: () => readsAtChange.push(traced.calls.filter((call) => call.startsWith('getData ')).length),
    });
    await eventually('the first watch', () => isWatching(zk.server, path, client.sessionId));
    for (const data of ['b', 'c']) {
      await writer.setData(path, data);
      await eventually(`the watch set again after the change to ${data}`, () => isWatching(zk.server, path, client.sessionId));
    }
    await writer.delete(path);
    await expect(wait.done).resolves.toBe('deleted');
    expect(readsAtChange).toEqual([1, 2]);
  });

  it('tells onRead what each read found, and hears a read in flight out before it ends on the deletion', async () => {
    const path = await node('first');
    const writer = await connect();
    const traced = new InstrumentedTransports();
    const client = await zk.clients.connect({ connectString: zk.server.connectString, transportFactory: traced.factory });
    const reads: string[] = [];
    const wait = new DeletionWait(client, path, client.session!, undefined, {
      onRead: (data, stat) => reads.push(`${data.toString('utf8')}@${stat.version}`),
    });
    // The server sets the watch before it answers: the answer may reach the client after the
    // server shows the watch.
    await eventually('the first read', () => reads.length > 0);
    expect(reads).toEqual(['first@0']);
    // The change makes the wait read again; its answer is held back until the node is gone, so
    // the deletion's event reaches the client first.
    const held = traced.holdNext('getData', path);
    await writer.setData(path, 'second');
    await held.reached;
    // A watcher of the test's on the same node, in the same session: the client tells it of the
    // deletion in the same dispatch as the wait.
    let heard!: () => void;
    const deletionHeard = new Promise<void>((resolve) => (heard = resolve));
    await client.exists(path, { watcher: (event) => event.type === 'deleted' && heard() });
    await writer.delete(path);
    await deletionHeard;
    expect(await settledYet(wait.done)).toBe(false);
    held.release();
    await expect(wait.done).resolves.toBe('deleted');
    expect(reads).toEqual(['first@0', 'second@1']);
  });

  it('tells onGone how the node went, from the handler that learnt it, before a waiter resumes', async () => {
    const client = await connect();
    const heard: string[] = [];
    const waitFor = (path: string) => {
      const wait = new DeletionWait(client, path, client.session!, undefined, { onGone: (outcome) => heard.push(`told ${outcome}`) });
      // A waiter's await resumes here: a read sent from onGone leaves before it.
      void wait.done.then((outcome) => heard.push(`resumed ${outcome}`));
      return wait;
    };
    await expect(waitFor(`${randomRoot('deletion')}/never`).done).resolves.toBe('missing');
    const path = await node();
    const writer = await connect();
    const wait = waitFor(path);
    await eventually('the watch', () => isWatching(zk.server, path, client.sessionId));
    await writer.delete(path);
    await expect(wait.done).resolves.toBe('deleted');
    expect(heard).toEqual(['told missing', 'resumed missing', 'told deleted', 'resumed deleted']);
  });

  it('tells onGone nothing when the wait ends otherwise', async () => {
    const path = await node();
    const client = await connect();
    const controller = new AbortController();
    const told: string[] = [];
    const wait = new DeletionWait(client, path, client.session!, controller.signal, { onGone: (outcome) => told.push(outcome) });
    await eventually('the watch', () => isWatching(zk.server, path, client.sessionId));
    controller.abort(new Error('stop'));
    await expect(wait.done).rejects.toThrow('stop');
    expect(told).toEqual([]);
  });
});
