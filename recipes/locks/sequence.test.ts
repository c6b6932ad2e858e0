import { lockNodesBefore, sequenceOf, sortLockNodes } from './sequence';

const p = (seq: string) => `_c_1b4e28ba-2fa1-11d2-883f-0016d3cca427-lock-${seq}`;

describe('lock node ordering', () => {
  it('reads the 10-digit suffix after the last lock name, ignoring the protection prefix', () => {
    expect(sequenceOf(p('0000000007'), 'lock-')).toBe(7);
    expect(sequenceOf('lock-lock-0000000012', 'lock-')).toBe(12);
    expect(sequenceOf('_c_x-__READ__0000000003', '__READ__')).toBe(3);
    expect(sequenceOf('unrelated', 'lock-')).toBeUndefined();
    expect(sequenceOf('lock-abc', 'lock-')).toBeUndefined();
  });

  it('takes only an optional minus and 1 to 11 ASCII digits, within a signed 32-bit int', () => {
    const cases: Array<[string, number | undefined]> = [
      ['lock-', undefined],
      ['lock--', undefined],
      ['lock-7', 7],
      ['lock--0', -0],
      ['lock-00000000001', 1],
      ['lock-000000000001', undefined],
      ['lock-12a', undefined],
      ['lock- 12', undefined],
      ['lock-+12', undefined],
      ['lock-１２', undefined],
      ['lock-2147483647', 2 ** 31 - 1],
      ['lock-2147483648', undefined],
      ['lock--2147483649', undefined],
      ['lock--0000000001', 2 ** 32 - 1],
    ];
    for (const [name, expected] of cases) expect([name, sequenceOf(name, 'lock-')]).toEqual([name, expected]);
  });

  it('reads every name as the text after the last lock name, on random names', () => {
    // The reference: Curator's reading, by a search for the last occurrence, then the range check.
    const reference = (name: string, lockName: string): number | undefined => {
      const at = name.lastIndexOf(lockName);
      const suffix = at < 0 ? '' : name.slice(at + lockName.length);
      if (!/^-?[0-9]{1,11}$/.test(suffix)) return undefined;
      const n = Number(suffix);
      if (n < -(2 ** 31) || n > 2 ** 31 - 1) return undefined;
      return n < 0 ? n + 2 ** 32 : n;
    };
    let state = 0x1b873593;
    const random = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state % n;
    };
    const lockNames = ['lock-', '__READ__', '-0', '00', '7'];
    const pieces = [...lockNames, '0', '1', '9', '-', 'x', '0000000001', '2147483647', '2147483648', '_c_ab-'];
    for (let round = 0; round < 20_000; round++) {
      const name = Array.from({ length: random(6) }, () => pieces[random(pieces.length)]).join('');
      const lockName = lockNames[random(lockNames.length)];
      expect([name, lockName, sequenceOf(name, lockName)]).toEqual([name, lockName, reference(name, lockName)]);
    }
  });

  it('sorts by sequence, not by the random prefix', () => {
    const children = ['_c_ffff-lock-0000000002', '_c_0000-lock-0000000010', '_c_aaaa-lock-0000000001'];
    expect(sortLockNodes(children, ['lock-'])).toEqual(['_c_aaaa-lock-0000000001', '_c_ffff-lock-0000000002', '_c_0000-lock-0000000010']);
  });

  it('keeps FIFO order across the 2^31 wrap of the parent counter', () => {
    // ZooKeeper formats its signed 32-bit counter with %010d: past 2147483647 comes -2147483648.
    const beforeWrap = [p('2147483646'), p('2147483647')];
    const afterWrap = [p('-2147483648'), p('-2147483647')];
    expect(sequenceOf(p('-2147483648'), 'lock-')).toBe(2 ** 31);
    expect(sortLockNodes([...afterWrap, ...beforeWrap], ['lock-'])).toEqual([...beforeWrap, ...afterWrap]);
    // Lexical order, as Curator and kazoo sort, would put the wrapped nodes first.
    expect([...afterWrap, ...beforeWrap].sort()[0]).toBe(p('-2147483647'));
  });

  it('sorts read and write nodes together', () => {
    const children = ['_c_b-__WRIT__0000000002', '_c_a-__READ__0000000001', '_c_c-__READ__0000000003', 'other'];
    expect(sortLockNodes(children, ['__READ__', '__WRIT__'])).toEqual(['_c_a-__READ__0000000001', '_c_b-__WRIT__0000000002', '_c_c-__READ__0000000003']);
  });

  it('finds the nodes before ours as sorting the whole listing would, on random listings', () => {
    // A seeded generator: the same listings on every run.
    let state = 0x2545f491;
    const random = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state % n;
    };
    const names = ['__READ__', '__WRIT__'];
    const makeName = (): string => {
      const kind = random(10);
      if (kind === 0) return `other-${random(1000)}`;
      const seq = kind === 1 ? `-${String(random(2 ** 31)).padStart(10, '0')}` : String(random(40)).padStart(10, '0');
      return `_c_${random(100000).toString(16)}-${names[random(2)]}${seq}`;
    };
    for (let round = 0; round < 2_000; round++) {
      const children = [...new Set(Array.from({ length: random(round % 2 === 0 ? 30 : 90) }, makeName))];
      const ours = random(5) === 0 ? makeName() : (children[random(children.length)] ?? makeName());
      const sorted = sortLockNodes(children, names);
      const at = sorted.indexOf(ours);
      expect(lockNodesBefore(children, names, ours)).toEqual(at < 0 ? undefined : sorted.slice(0, at));
    }
  });
});
