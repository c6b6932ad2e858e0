import { InvalidArgumentError } from '../../src/errors';
import {
  DELAY_ORDER,
  FIFO_ORDER,
  ID_ORDER,
  PRIORITY_ORDER,
  delayItemName,
  epochOf,
  epochToString,
  fixId,
  idItemName,
  parseId,
  priorityItemName,
  priorityToString,
} from './naming';

describe('priority names', () => {
  it.each([
    [0, '100000000'],
    [5, '100000005'],
    [255, '1000000FF'],
    [2 ** 31 - 1, '17FFFFFFF'],
    [-1, '0FFFFFFFF'],
    [-2, '0FFFFFFFE'],
    [-256, '0FFFFFF00'],
    [-(2 ** 31), '080000000'],
  ])('priority %d is %s (%%08X of the 32-bit two\'s complement)', (priority, text) => {
    expect(priorityToString(priority)).toBe(text);
    expect(priorityItemName(priority)).toBe(`queue-${text}`);
  });

  it('sorts lexically into numeric order, FIFO within a priority', () => {
    const priorities = [7, -1, 0, 2 ** 31 - 1, -(2 ** 31), 300, -300, 1];
    const names = priorities.map((p, i) => `${priorityItemName(p)}${String(i).padStart(10, '0')}`);
    const sorted = PRIORITY_ORDER.sort(names).map((n) => priorities[names.indexOf(n)]);
    expect(sorted).toEqual([...priorities].sort((a, b) => a - b));
    expect(PRIORITY_ORDER.sort(['queue-1000000050000000009', 'queue-1000000050000000003'])).toEqual([
      'queue-1000000050000000003',
      'queue-1000000050000000009',
    ]);
  });

  it.each([1.5, NaN, 2 ** 31, -(2 ** 31) - 1, '1'])('refuses priority %p', (p) => {
    expect(() => priorityToString(p as number)).toThrow(InvalidArgumentError);
  });

  it('a requeued item keeps its priority, and the name never grows (CURATOR-56)', () => {
    expect(PRIORITY_ORDER.requeuePrefix('queue-0FFFFFFFF0000000012')).toBe('queue-0FFFFFFFF');
    expect(PRIORITY_ORDER.requeuePrefix('queue-0000000012')).toBe('queue-');
    expect(FIFO_ORDER.requeuePrefix('queue-0000000012')).toBe('queue-');
  });
});

describe('delay names', () => {
  it('are queue-|<epoch as %08X>|, at least 8 hex digits', () => {
    expect(epochToString(255)).toBe('|000000FF|');
    expect(epochToString(1_700_000_000_123)).toBe(`|${(1_700_000_000_123).toString(16).toUpperCase()}|`);
    expect(delayItemName(0x1234abcd)).toBe('queue-|1234ABCD|');
    expect(() => epochToString(0)).toThrow(InvalidArgumentError);
    expect(() => epochToString(-5)).toThrow(InvalidArgumentError);
    expect(() => epochToString(1.5)).toThrow(InvalidArgumentError);
  });

  it('read the epoch between the last two |, as Curator does; none or not hex is 0', () => {
    expect(epochOf('queue-|18BCFE56800|0000000004')).toBe(0x18bcfe56800);
    expect(epochOf('queue-0000000004')).toBe(0);
    expect(epochOf('queue-||0000000004')).toBe(0);
    expect(epochOf('queue-|xyz|0000000004')).toBe(0);
  });

  it('sort by time, then by sequence; nodes without a time first', () => {
    const names = ['queue-|00000300|0000000001', 'queue-|00000100|0000000003', 'queue-0000000009', 'queue-|00000100|0000000002'];
    expect(DELAY_ORDER.sort(names)).toEqual(['queue-0000000009', 'queue-|00000100|0000000002', 'queue-|00000100|0000000003', 'queue-|00000300|0000000001']);
    expect(DELAY_ORDER.dueAt('queue-|00000300|0000000001')).toBe(0x300);
    expect(DELAY_ORDER.requeuePrefix('queue-|00000300|0000000001')).toBe('queue-|00000300|');
    expect(DELAY_ORDER.requeuePrefix('queue-0000000001')).toBe('queue-');
  });
});

describe('id names', () => {
  it('replace / and | in the id with _', () => {
    expect(fixId('a/b|c')).toBe('a_b_c');
    expect(idItemName('orders/42|x')).toBe('queue-|orders_42_x|');
    expect(() => fixId('')).toThrow(InvalidArgumentError);
    expect(() => fixId(5 as unknown as string)).toThrow(InvalidArgumentError);
  });

  it('parse the id from the first | to the next, and sort by the rest', () => {
    expect(parseId('queue-|a_b|0000000007')).toEqual({ id: 'a_b', cleaned: 'queue-0000000007' });
    expect(parseId('queue-0000000007')).toEqual({ id: 'queue-0000000007', cleaned: 'queue-0000000007' });
    const names = ['queue-|zzz|0000000002', 'queue-|aaa|0000000005', 'queue-|mmm|0000000001'];
    expect(ID_ORDER.sort(names)).toEqual(['queue-|mmm|0000000001', 'queue-|zzz|0000000002', 'queue-|aaa|0000000005']);
    expect(ID_ORDER.requeuePrefix('queue-|mmm|0000000001')).toBe('queue-|mmm|');
  });
});

describe('FIFO names', () => {
  it('sort lexically by sequence; foreign sorting is the caller’s', () => {
    expect(FIFO_ORDER.sort(['queue-0000000010', 'queue-0000000002', 'queue-0000000001'])).toEqual([
      'queue-0000000001',
      'queue-0000000002',
      'queue-0000000010',
    ]);
    expect(FIFO_ORDER.dueAt('queue-0000000001')).toBe(0);
  });
});
