import { InvalidArgumentError } from '../src/errors';
import { FrameScanner, countRequests, loseNext, loseReplyToCreate, mutateReplies, type LostReply } from './frames';

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

describe('mutateReplies', () => {
  const down = { connection: 1, direction: 'upstream->client' as const };
  const up = { connection: 1, direction: 'client->upstream' as const };
  /** A server's stream: the answer to the handshake, then replies with their zxid set to 0x0102030405060708. */
  function serverStream(replies: number): Buffer {
    const answers = Array.from({ length: replies }, (_, i) => {
      const r = reply(i + 1);
      r.writeBigInt64BE(0x0102030405060708n, 8);
      return r;
    });
    return Buffer.concat([frame(Buffer.alloc(36, 7)), ...answers]);
  }

  it('rejects a bad rate or kinds before it sees any chunk', () => {
    expect(() => mutateReplies({ seed: 1, rate: 0 })).toThrow(InvalidArgumentError);
    expect(() => mutateReplies({ seed: 1, rate: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => mutateReplies({ seed: 1, rate: Number.NaN })).toThrow(InvalidArgumentError);
    expect(() => mutateReplies({ seed: 1, rate: 0.5, kinds: [] })).toThrow(InvalidArgumentError);
    expect(() => mutateReplies({ seed: 1, rate: 0.5, kinds: ['melt' as 'flip'] })).toThrow(InvalidArgumentError);
  });

  it('leaves requests alone, and mutates replies at about its rate, the same way for the same seed', () => {
    const run = (seed: number) => {
      const { interceptor, counts } = mutateReplies({ seed, rate: 0.25, kinds: ['flip', 'duplicate'] });
      const out = Array.from({ length: 400 }, (_, i) => interceptor(reply(i + 1), { connection: 1, direction: 'upstream->client' }));
      expect(interceptor(request(1, 4, '/a'), up)).toBe('forward');
      return { out, counts };
    };
    const a = run(9);
    expect(a.counts.chunks).toBe(400);
    const mutated = a.counts.flip + a.counts.duplicate;
    expect(mutated).toBeGreaterThan(60);
    expect(mutated).toBeLessThan(140);
    expect(a.out.filter((v) => v !== 'forward')).toHaveLength(mutated);
    expect(run(9).out).toEqual(a.out);
    expect(run(10).out).not.toEqual(a.out);
  });

  it('flips 1-3 bytes, duplicates a whole chunk, and truncates by forwarding a head and ending the connection', () => {
    const chunk = reply(5);
    const flip = mutateReplies({ seed: 3, rate: 1, kinds: ['flip'] }).interceptor(chunk, down) as Buffer;
    const changed = [...flip].filter((b, i) => b !== chunk[i]).length;
    expect(flip).toHaveLength(chunk.length);
    expect(changed).toBeGreaterThanOrEqual(1);
    expect(changed).toBeLessThanOrEqual(3);
    expect(mutateReplies({ seed: 3, rate: 1, kinds: ['duplicate'] }).interceptor(chunk, down)).toEqual(Buffer.concat([chunk, chunk]));
    const { interceptor } = mutateReplies({ seed: 3, rate: 1, kinds: ['truncate'] });
    const verdict = interceptor(chunk, down) as { forward: Buffer; then: 'end' };
    expect(verdict.then).toBe('end');
    expect(verdict.forward.length).toBeLessThan(chunk.length);
    expect(verdict.forward).toEqual(chunk.subarray(0, verdict.forward.length));
    expect(interceptor(request(6, 11, ''), up)).toBe('forward');
  });

  it('with spareTrusted, flips only lengths, xids, error codes and event types and states, however the stream is cut', () => {
    const stream = serverStream(20);
    // The 8th reply is a notification (xid -1): its event type and state may be flipped too.
    stream.writeInt32BE(-1, 40 + 7 * 30 + 4);
    const open = new Set<number>();
    for (let f = 0; f < 20; f++) {
      const at = 40 + f * 30; // after the answer to the handshake: length and 36 bytes
      for (let b = 0; b < 8; b++) open.add(at + b);
      for (let b = 16; b < 20; b++) open.add(at + b);
      if (f === 7) for (let b = 20; b < 28; b++) open.add(at + b);
    }
    const seen = new Set<number>();
    let flipped = 0;
    for (let seed = 0; seed < 50; seed++) {
      const { interceptor, counts } = mutateReplies({ seed, rate: 1, kinds: ['flip'], spareTrusted: true });
      const cuts = [0, 3 + (seed % 17), 41 + seed, 200 + seed * 3, stream.length].sort((x, y) => x - y);
      const out = Buffer.concat(
        cuts.slice(1).map((end, i) => {
          const chunk = stream.subarray(cuts[i], end);
          const verdict = interceptor(chunk, down);
          return Buffer.isBuffer(verdict) ? verdict : chunk;
        }),
      );
      flipped += counts.flip;
      for (let i = 0; i < stream.length; i++) {
        if (out[i] === stream[i]) continue;
        expect(open.has(i)).toBe(true);
        seen.add(i);
      }
    }
    expect(flipped).toBeGreaterThan(100);
    // The notification's type and state, and some error code, were among them.
    expect([...seen].some((i) => i >= 40 + 7 * 30 + 20 && i < 40 + 7 * 30 + 28)).toBe(true);
    expect([...seen].some((i) => (i - 40) % 30 >= 16 && (i - 40) % 30 < 20)).toBe(true);
    // Without it, the zxids are fair game too.
    const { interceptor } = mutateReplies({ seed: 1, rate: 1, kinds: ['flip'] });
    const zxidOnly = Buffer.alloc(8, 1);
    expect(interceptor(zxidOnly, down)).not.toEqual(zxidOnly);
  });
});
