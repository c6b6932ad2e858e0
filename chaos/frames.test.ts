import { FrameScanner, loseReplyToCreate, type LostReply } from './frames';

function frame(body: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length);
  return Buffer.concat([length, body]);
}

/** A request: xid, opcode, then a path (as a create's body starts). */
function request(xid: number, op: number, path: string): Buffer {
  const head = Buffer.alloc(12);
  head.writeInt32BE(xid, 0);
  head.writeInt32BE(op, 4);
  head.writeInt32BE(Buffer.byteLength(path), 8);
  return frame(Buffer.concat([head, Buffer.from(path), Buffer.alloc(20)]));
}

/** A reply: xid, zxid, error code. */
function reply(xid: number): Buffer {
  const body = Buffer.alloc(16 + 10);
  body.writeInt32BE(xid, 0);
  return frame(body);
}

/** The session handshake: protocol version 0, and the rest of a 45-byte body. */
const handshake = frame(Buffer.alloc(45));

describe('FrameScanner', () => {
  it('finds frames within a chunk and across chunks, however the bytes are cut', () => {
    const stream = Buffer.concat([request(1, 4, '/a'), request(2, 1, '/chaos/x'), reply(3)]);
    for (let cut = 1; cut < stream.length; cut++) {
      const scanner = new FrameScanner();
      const frames = [...scanner.feed(stream.subarray(0, cut)), ...scanner.feed(stream.subarray(cut))];
      expect(frames.map((f) => f.head.readInt32BE(0))).toEqual([1, 2, 3]);
    }
  });

  it('gives up on a direction that does not start at a frame boundary', () => {
    const scanner = new FrameScanner();
    expect(scanner.feed(Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3]))).toEqual([]);
    expect(scanner.feed(request(1, 1, '/chaos/x'))).toEqual([]);
  });
});

describe('loseReplyToCreate', () => {
  it('resets the connection on the reply to the first create under the prefix, and only that', () => {
    const lost: LostReply[] = [];
    const intercept = loseReplyToCreate('/chaos', (l) => lost.push(l));
    const up = { connection: 7, direction: 'client->upstream' as const };
    const down = { connection: 7, direction: 'upstream->client' as const };
    expect(intercept(handshake, up)).toBe('forward');
    expect(intercept(request(5, 1, '/elsewhere/x'), up)).toBe('forward');
    expect(intercept(request(6, 4, '/chaos/x'), up)).toBe('forward'); // getData: not a create
    expect(intercept(request(8, 15, '/chaos/lock-'), up)).toBe('forward');
    expect(intercept(reply(5), down)).toBe('forward');
    expect(intercept(reply(8), { connection: 9, direction: 'upstream->client' })).toBe('forward');
    expect(intercept(reply(8), down)).toBe('reset');
    expect(lost).toEqual([{ connection: 7, xid: 8, path: '/chaos/lock-' }]);
    // Once is enough.
    expect(intercept(request(9, 1, '/chaos/y'), up)).toBe('forward');
    expect(intercept(reply(9), down)).toBe('forward');
  });
});
