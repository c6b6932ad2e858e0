/**
 * One reply changed on its way from a real server, in a way that breaks its structure: the
 * protocol client drops the connection and carries on in its session, and nothing acts on the
 * damaged frame: no caller gets its answer, no watcher its event. Protocol transport only: the
 * native binding's C client decodes the frames itself (its behaviour under random mutations is in
 * mutatedReplies.test.ts).
 */
import { FrameScanner } from '../../chaos/frames';
import type { ZkClient } from '../../src';
import { OpCode, Xid } from '../../src/protocol/opcodes';
import { InterProcessMutex } from '../../recipes/locks';
import type { ChunkInterceptor } from '../../src/testing';
import { StateRecorder, eventually, randomRoot, timing } from '../helpers';
import { useZooKeeper } from '../fixture';

const { getData: GET_DATA, create2: CREATE2 } = OpCode;
const NOTIFICATION = Xid.notification;

/** Byte offsets in a reply frame, its 4-byte length prefix counted. */
const XID_AT = 4;
const ERR_AT = 16;
/** A notification's event type; a getData reply's data length. */
const BODY_AT = 20;

/** What a reply answers: the request's opcode and path. */
interface Asked {
  readonly op: number;
  readonly path: string;
}

/**
 * An interceptor that hands `rewrite` every whole frame from the server (length prefix included),
 * with the request it answers when it answers one, and sends what `rewrite` returns instead. It
 * holds a frame's bytes until the frame is whole, so a rewrite never spans chunks.
 */
function rewriteReplies(rewrite: (frame: Buffer, asked: Asked | undefined) => Buffer): ChunkInterceptor {
  const held = new Map<number, Buffer>();
  const requests = new Map<number, FrameScanner>();
  const asked = new Map<string, Asked>();
  return (chunk, { connection, direction }) => {
    if (direction === 'client->upstream') {
      let scanner = requests.get(connection);
      if (!scanner) requests.set(connection, (scanner = new FrameScanner()));
      for (const f of scanner.feed(chunk)) {
        if (f.head.length < 12) continue;
        // A request's body: xid, opcode, then (for those with a path) the path's length and bytes.
        const length = f.head.readInt32BE(8);
        const path = length > 0 ? f.head.subarray(12, 12 + length).toString('utf8') : '';
        asked.set(`${connection}:${f.head.readInt32BE(0)}`, { op: f.head.readInt32BE(4), path });
      }
      return 'forward';
    }
    let bytes = Buffer.concat([held.get(connection) ?? Buffer.alloc(0), chunk]);
    const out: Buffer[] = [];
    while (bytes.length >= 4 && bytes.length >= 4 + bytes.readInt32BE(0)) {
      const size = 4 + bytes.readInt32BE(0);
      const frame = Buffer.from(bytes.subarray(0, size));
      const xid = size >= 8 ? frame.readInt32BE(XID_AT) : 0;
      out.push(rewrite(frame, xid > 0 ? asked.get(`${connection}:${xid}`) : undefined));
      bytes = bytes.subarray(size);
    }
    held.set(connection, Buffer.from(bytes));
    return Buffer.concat(out);
  };
}

/** A rewrite applied to the first frame that `matches`, then never again. */
function once(matches: (frame: Buffer, asked: Asked | undefined) => boolean, change: (frame: Buffer) => Buffer): { interceptor: ChunkInterceptor; done: () => boolean } {
  let fired = false;
  return {
    interceptor: rewriteReplies((frame, asked) => {
      if (fired || !matches(frame, asked)) return frame;
      fired = true;
      return change(frame);
    }),
    done: () => fired,
  };
}

describe('a reply whose structure was broken on the way (protocol transport)', () => {
  const zk = useZooKeeper({ proxy: 'each' });
  let admin: ZkClient;
  let root: string;

  beforeEach(async () => {
    admin = await zk.clients.connect({ connectString: zk.server.connectString });
    root = randomRoot('mutated');
    await admin.create(`${root}/n`, { data: 'hello', createParents: 'persistent' });
  });

  function behindProxy(sessionTimeoutMs = 10_000): Promise<ZkClient> {
    return zk.clients.connect({ connectString: zk.proxy.connectString, sessionTimeoutMs });
  }

  /**
   * Rewrites the first reply to `client`'s getData of the test's node with `change`, and reads the
   * node: the real data must come, in the same session.
   */
  async function readThroughRewrite(client: ZkClient, change: (frame: Buffer) => void): Promise<void> {
    const session = client.sessionId;
    const bad = once(
      (_frame, asked) => asked?.op === GET_DATA && asked.path === `${root}/n`,
      (frame) => {
        change(frame);
        return frame;
      },
    );
    zk.proxy.intercept(bad.interceptor);
    const { data } = await client.getData(`${root}/n`, { signal: AbortSignal.timeout(timing(30_000)) });
    expect(bad.done()).toBe(true);
    expect(data.toString()).toBe('hello');
    expect(client.sessionId).toBe(session);
  }

  it('a length prefix grown past the bytes that follow: the read timeout drops the connection though pings still arrive', async () => {
    // 6 s: the read timeout is 4 s, pings leave every 2 s and their answers keep coming in.
    // The answer never completes on that connection; it comes on the next one, in the same session.
    await readThroughRewrite(await behindProxy(6_000), (frame) => frame.writeInt32BE(frame.readInt32BE(0) + 0x1_0000, 0));
  });

  it('a notification of an event type ZooKeeper does not have: dropped, and the real event comes after the reconnect', async () => {
    const client = await behindProxy();
    const session = client.sessionId;
    const events: string[] = [];
    await client.getData(`${root}/n`, { watcher: (e) => events.push(`${e.type} ${e.path}`) });
    const bad = once(
      (frame) => frame.length >= BODY_AT + 4 && frame.readInt32BE(XID_AT) === NOTIFICATION,
      (frame) => {
        frame.writeInt32BE(99, BODY_AT);
        return frame;
      },
    );
    zk.proxy.intercept(bad.interceptor);
    const states = new StateRecorder(client);
    await admin.delete(`${root}/n`);
    // Setting the watch again on the new connection tells the server the node went since.
    await eventually('the deletion event', () => events.length > 0);
    expect(bad.done()).toBe(true);
    expect(states.states).toContain('RECONNECTED');
    expect(events).toEqual([`deleted ${root}/n`]);
    expect(client.sessionId).toBe(session);
  });

  it('an error code ZooKeeper does not have: dropped, and the call retried gets the real answer', async () => {
    await readThroughRewrite(await behindProxy(), (frame) => frame.writeInt32BE(-999, ERR_AT));
  });

  it("a lock node's czxid damaged in the create's answer: dropped, and the fencing token is the node's real czxid", async () => {
    const client = await behindProxy();
    const session = client.sessionId;
    const bad = once(
      // The answer that created it (a first try may find no parent yet).
      (frame, asked) => asked?.op === CREATE2 && asked.path.startsWith(`${root}/lock/`) && frame.readInt32BE(ERR_AT) === 0,
      (frame) => {
        // After the header, the new node's path (its length, then its bytes), then the stat, czxid first.
        const czxidAt = BODY_AT + 4 + frame.readInt32BE(BODY_AT);
        frame[czxidAt + 5] ^= 0x40;
        return frame;
      },
    );
    zk.proxy.intercept(bad.interceptor);
    const lease = await new InterProcessMutex(client, `${root}/lock`).acquire({ timeoutMs: timing(30_000) });
    expect(bad.done()).toBe(true);
    expect(lease.fencingToken).toBe((await admin.exists(lease.node))?.czxid);
    expect(await admin.getChildren(`${root}/lock`)).toHaveLength(1);
    expect(client.sessionId).toBe(session);
    await lease.release();
  });

  it('a length inside a record made shorter, leaving bytes over: dropped, and the call retried gets the real data', async () => {
    // The data's length, one less: the stat is read one byte early, and one byte is left.
    await readThroughRewrite(await behindProxy(), (frame) => frame.writeInt32BE(frame.readInt32BE(BODY_AT) - 1, BODY_AT));
  });
});
