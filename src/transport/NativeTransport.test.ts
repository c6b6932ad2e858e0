import { attemptFailure, inFlightFailureCode, initFailure } from './nativeFailures';
import { normalizePassword, sessionIdFromHex, sessionIdToHex } from './nativeValues';

describe('session ids and passwords', () => {
  it('round-trip 64-bit session ids exactly, including ids above 2^53 and with the top bit set', () => {
    for (const hex of ['1', '100000292d90000', 'ffffffffffffffff', '8000000000000001', '1fffffffffffff1']) {
      const id = sessionIdFromHex(hex);
      expect(sessionIdToHex(id)).toBe(hex);
    }
    expect(sessionIdFromHex('1fffffffffffff1')).toBe(0x1fffffffffffff1n);
  });

  it('normalises passwords to the uppercase hex the binding parses, and rejects malformed ones', () => {
    expect(normalizePassword('1a9e2862280308f8b26302d2e58f69c6')).toBe('1A9E2862280308F8B26302D2E58F69C6');
    expect(() => normalizePassword('xyz')).toThrow(/32 hex digits/);
    expect(() => normalizePassword(undefined)).toThrow(/32 hex digits/);
  });
});

describe('why a connection attempt failed', () => {
  it('names the hosts that did not resolve when the C client cannot even begin', () => {
    const err = initFailure({ code: 'ENOENT', message: "ENOENT, failed to init '../src/node-zk.cpp'" }, 'a.invalid:2181,b.invalid:2182/app');
    expect(err.message).toBe('host not found: a.invalid, b.invalid (getaddrinfo ENOTFOUND)');
    expect((err as { code?: string }).code).toBe('ENOTFOUND');
    expect(initFailure({ code: 'EINVAL' }, 'h:1').message).toMatch(/could not resolve h, or the connect string's chroot is not a valid path \(EINVAL\)/);
  });

  it('tells a refusal from a timeout by how long the attempt lasted, and whether a server took the connection', () => {
    // A 30 s session timeout gives an attempt 20 s.
    expect(attemptFailure({ startedAt: 0, reachedServer: false }, 150, 30_000).message).toMatch(/^connection refused, or closed by the server at once/);
    expect(attemptFailure({ startedAt: 0, reachedServer: false }, 20_100, 30_000).message).toMatch(/^no answer within 20000 ms \(timed out/);
    expect(attemptFailure({ startedAt: 0, reachedServer: true }, 20_100, 30_000).message).toMatch(/^a server took the connection but set up no session within 20000 ms/);
    expect(attemptFailure({ startedAt: 0, reachedServer: true }, 150, 30_000).message).toMatch(/^a server took the connection, then closed it/);
  });
});

describe('a call in flight when its handle closes', () => {
  it('fails with CONNECTIONLOSS when the handle was replaced, and with CLOSING after our own close()', () => {
    expect(inFlightFailureCode(-116, false)).toBe(-4);
    expect(inFlightFailureCode(-116, true)).toBe(-116);
    expect(inFlightFailureCode(-112, false)).toBe(-112);
    expect(inFlightFailureCode(-4, true)).toBe(-4);
  });
});
