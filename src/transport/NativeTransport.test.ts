import { normalizePassword, sessionIdFromHex, sessionIdToHex } from './NativeTransport';

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
