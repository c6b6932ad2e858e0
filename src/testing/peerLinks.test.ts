import { rewriteAnnouncedAddress } from './peerLinks';

/** A first election message as ZooKeeper 3.5-3.8 sends it: version, server id, address length, address. */
function initialMessage(version: bigint, sid: bigint, address: string, rest = Buffer.alloc(0)): Buffer {
  const text = Buffer.from(address, 'utf8');
  const head = Buffer.alloc(20);
  head.writeBigInt64BE(version, 0);
  head.writeBigInt64BE(sid, 8);
  head.writeInt32BE(text.length, 16);
  return Buffer.concat([head, text, rest]);
}

describe('the rewrite of the address a member announces', () => {
  it('replaces the real election address by the proxy the peer connects back through, fixing the length', () => {
    const rest = Buffer.from([1, 2, 3]);
    const out = rewriteAnnouncedAddress(initialMessage(-65535n, 2n, '127.0.0.1:40001', rest), '127.0.0.1:40001', '127.0.0.1:5001');
    expect(out).toEqual(initialMessage(-65535n, 2n, '127.0.0.1:5001', rest));
  });

  it('rewrites one address among several, and the older version too', () => {
    const out = rewriteAnnouncedAddress(initialMessage(-65536n, 1n, '127.0.0.2:7|127.0.0.1:40001'), '127.0.0.1:40001', '127.0.0.1:45555');
    expect(out).toEqual(initialMessage(-65536n, 1n, '127.0.0.2:7|127.0.0.1:45555'));
  });

  it('leaves alone any other chunk: another address, another version, a short or cut-off message', () => {
    const other = initialMessage(-65535n, 2n, '127.0.0.1:40002');
    expect(rewriteAnnouncedAddress(other, '127.0.0.1:40001', '127.0.0.1:5001')).toBe(other);
    const quorumPacket = Buffer.alloc(40, 7);
    expect(rewriteAnnouncedAddress(quorumPacket, '127.0.0.1:40001', '127.0.0.1:5001')).toBe(quorumPacket);
    const short = Buffer.alloc(10);
    expect(rewriteAnnouncedAddress(short, '127.0.0.1:40001', '127.0.0.1:5001')).toBe(short);
    const cut = initialMessage(-65535n, 2n, '127.0.0.1:40001').subarray(0, 25);
    expect(rewriteAnnouncedAddress(cut, '127.0.0.1:40001', '127.0.0.1:5001')).toBe(cut);
  });
});
