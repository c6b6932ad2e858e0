import { FrameScanner, countRequests, loseNext, loseReplyToCreate, type LostReply } from './frames';

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

describe('loseNext', () => {
  const up = { connection: 3, direction: 'client->upstream' as const };
  const down = { connection: 3, direction: 'upstream->client' as const };

  it('at the reply: lets the request through and resets on its reply, as many times as asked', () => {
    const lost: number[] = [];
    const intercept = loseNext(new Set([14]), 'reply', (l) => lost.push(l.xid), 2);
    expect(intercept(handshake, up)).toBe('forward');
    expect(intercept(request(4, 3, '/a'), up)).toBe('forward'); // exists: not asked for
    expect(intercept(request(5, 14, '/a'), up)).toBe('forward');
    expect(intercept(reply(4), down)).toBe('forward');
    expect(intercept(reply(5), down)).toBe('reset');
    expect(intercept(request(6, 14, '/a'), { connection: 4, direction: 'client->upstream' })).toBe('forward');
    expect(intercept(reply(6), { connection: 4, direction: 'upstream->client' })).toBe('reset');
    expect(lost).toEqual([5, 6]);
    expect(intercept(request(7, 14, '/a'), { connection: 5, direction: 'client->upstream' })).toBe('forward');
    expect(intercept(reply(7), { connection: 5, direction: 'upstream->client' })).toBe('forward');
  });

  it('at the request: resets before the request reaches the server, once', () => {
    const lost: number[] = [];
    const intercept = loseNext(new Set([14]), 'request', (l) => lost.push(l.op));
    expect(intercept(request(4, 4, '/a'), up)).toBe('forward');
    expect(intercept(request(5, 14, '/a'), up)).toBe('reset');
    expect(intercept(request(6, 14, '/a'), up)).toBe('forward');
    expect(lost).toEqual([14]);
  });
});

describe('countRequests', () => {
  it('counts requests by opcode, across chunks and connections, and only requests', () => {
    const { interceptor, count } = countRequests();
    const up = { connection: 1, direction: 'client->upstream' as const };
    const stream = Buffer.concat([handshake, request(1, 14, '/a'), request(2, 3, '/a')]);
    expect(interceptor(stream.subarray(0, 30), up)).toBe('forward');
    expect(interceptor(stream.subarray(30), up)).toBe('forward');
    expect(interceptor(request(1, 14, '/a'), { connection: 2, direction: 'client->upstream' })).toBe('forward');
    expect(interceptor(reply(1), { connection: 1, direction: 'upstream->client' })).toBe('forward');
    expect([count(14), count(3), count(4)]).toEqual([2, 1, 0]);
  });
});
