import { parseCommandLine } from './args';
import { CliError, ExitCode } from './errors';
import { dataText, durationText, showData, table } from './format';
import { LEADER_SELECTOR_NAME } from '../recipes/leader/participants';
import { MUTEX_NAMES, isSemaphorePart, itemSequence, queueVariantOf, recognize, sortLockNodes } from './layouts';
import { readWriteHolds } from './locks';

const uuid = (i: number) => `_c_${String(i).repeat(8)}-1111-2222-3333-444444444444-`;

describe('recognize: which recipe a node’s children belong to', () => {
  it('lock-shaped layouts, protected as Curator writes them or not', () => {
    expect(recognize([`${uuid(1)}lock-0000000003`, `${uuid(2)}lock-0000000004`])).toMatchObject({ kind: 'mutex', others: [] });
    expect(recognize(['lock-0000000001'])?.kind).toBe('mutex');
    expect(recognize([`${uuid(1)}__READ__0000000001`, `${uuid(2)}__WRIT__0000000002`])?.kind).toBe('readWriteLock');
    expect(recognize([`${uuid(1)}latch-0000000001`])?.kind).toBe('leaderLatch');
    expect(recognize(['leases', 'locks'])?.kind).toBe('semaphore');
    expect(recognize(['leases'])?.kind).toBe('semaphore');
  });

  it('queues by their names', () => {
    expect(recognize(['queue-0000000001', 'queue-0000000002'])?.kind).toBe('distributedQueue');
    expect(recognize(['qn-0000000001'])?.kind).toBe('simpleQueue');
  });

  it('the recipe most children belong to; the rest counted apart', () => {
    const layout = recognize([`${uuid(1)}lock-0000000001`, `${uuid(2)}lock-0000000002`, 'config', `${uuid(3)}latch-0000000003`]);
    expect(layout?.kind).toBe('mutex');
    expect(layout?.others).toEqual(['config', `${uuid(3)}latch-0000000003`]);
  });

  it('nothing for names that only look alike, and for no children', () => {
    expect(recognize([])).toBeUndefined();
    expect(recognize(['config', 'locks-old', 'lock-x', 'queue-', 'queue-abc', 'qn-x'])).toBeUndefined();
    expect(recognize(['locks', 'other'])).toBeUndefined();
  });

  it('a lock node is what the mutex counts as one: any name with a sequence after the lock name', () => {
    const children = ['zzz-lock-0', 'my-lock-0000000001', `${uuid(1)}lock-0000000003`, 'config'];
    expect(recognize(children)).toEqual({ kind: 'mutex', members: children.slice(0, 3), others: ['config'] });
    expect(sortLockNodes(recognize(children)?.members ?? [], MUTEX_NAMES)).toEqual(sortLockNodes(children, [LEADER_SELECTOR_NAME]));
    expect(sortLockNodes(children, MUTEX_NAMES)[0]).toBe('zzz-lock-0');
  });

  it('a semaphore’s folders hold lock and lease nodes only', () => {
    expect(isSemaphorePart('leases', [`${uuid(1)}lease-0000000001`])).toBe(true);
    expect(isSemaphorePart('locks', [`${uuid(1)}lock-0000000001`])).toBe(true);
    expect(isSemaphorePart('locks', ['orders'])).toBe(false);
    expect(isSemaphorePart('leases', [`${uuid(1)}lock-0000000001`])).toBe(false);
  });
});

describe('queue names', () => {
  it('tells the DistributedQueue variants apart', () => {
    expect(queueVariantOf('queue-0000000007')).toBe('fifo');
    expect(queueVariantOf('queue--2147483648')).toBe('fifo');
    expect(queueVariantOf('queue-1000000050000000007')).toBe('priority');
    expect(queueVariantOf('queue-0FFFFFFFB0000000001')).toBe('priority');
    expect(queueVariantOf(`queue-|${Date.UTC(2026, 0, 1).toString(16).toUpperCase()}|0000000002`)).toBe('delay');
    expect(queueVariantOf('queue-|order_42|0000000003')).toBe('id');
    // Hex, but no plausible time: an id.
    expect(queueVariantOf('queue-|DEADBEEF|0000000004')).toBe('id');
    expect(queueVariantOf('queue-x')).toBeUndefined();
  });

  it('reads the sequence each variant ends with, unsigned across the wrap', () => {
    expect(itemSequence('queue-0000000007', 'fifo')).toBe(7);
    expect(itemSequence('queue--2147483648', 'fifo')).toBe(2 ** 31);
    expect(itemSequence('queue-1000000050000000012', 'priority')).toBe(12);
    expect(itemSequence('queue-|18C0A1B2C3D|0000000005', 'delay')).toBe(5);
    expect(itemSequence('queue-|a|0000000009', 'id')).toBe(9);
    expect(itemSequence('qn-0000000011', 'simple')).toBe(11);
  });
});

describe('readWriteHolds', () => {
  const r = (seq: number) => `${uuid(seq % 10)}__READ__${String(seq).padStart(10, '0')}`;
  const w = (seq: number) => `${uuid(seq % 10)}__WRIT__${String(seq).padStart(10, '0')}`;

  it('readers ahead of the first writer hold; the writer and everything after it wait', () => {
    expect(readWriteHolds([r(1), r(2), w(3), r(4)])).toEqual([true, true, false, false]);
  });

  it('a writer at the head holds alone', () => {
    expect(readWriteHolds([w(1), r(2), r(3)])).toEqual([true, false, false]);
  });

  it('a downgrade: the write node and its read node (same sequence) both hold, whichever sorts first', () => {
    expect(readWriteHolds([w(5), r(5), w(6)])).toEqual([true, true, false]);
    expect(readWriteHolds([r(5), w(5), r(7)])).toEqual([true, true, false]);
  });
});

describe('how data and times are shown', () => {
  it('printable UTF-8 as text, anything else as hex, both cut', () => {
    expect(showData(Buffer.from('10.0.0.5'))).toEqual({ encoding: 'utf8', value: '10.0.0.5', bytes: 8, truncated: false });
    expect(dataText(showData(Buffer.from('worker-1')))).toBe('"worker-1"');
    expect(dataText(showData(Buffer.alloc(0)))).toBe('(empty)');
    expect(showData(Buffer.from([0, 1, 0, 1, 1]))).toMatchObject({ encoding: 'hex', value: '0001000101' });
    expect(showData(Buffer.from('line\nbreak')).encoding).toBe('hex');
    expect(showData(Buffer.from([0xff, 0xfe])).encoding).toBe('hex');
    const long = showData(Buffer.from('é'.repeat(100)));
    expect(long).toMatchObject({ encoding: 'utf8', value: 'é'.repeat(64), bytes: 200, truncated: true });
    expect(dataText(long)).toBe(`"${'é'.repeat(64)}…" (200 bytes)`);
    expect(dataText(showData(Buffer.alloc(40)))).toBe(`0x${'00'.repeat(32)}… (40 bytes)`);
  });

  it('durations for people', () => {
    expect([850, 12_340, 245_000, 7_800_000, 277_200_000].map(durationText)).toEqual(['850ms', '12.3s', '4m05s', '2h10m', '3d05h']);
  });

  it('tables align columns', () => {
    expect(table([['A', 'BB', 'C'], ['aaa', 'b', 'c']])).toEqual(['A    BB  C', 'aaa  b   c']);
  });
});

describe('parseCommandLine', () => {
  it('reads a view, a watch and the flags', () => {
    expect(parseCommandLine(['locks', '/a', '--json', '-c', 'h:1', '--timeout-ms', '500'])).toEqual({
      kind: 'view',
      view: 'locks',
      watch: false,
      path: '/a',
      connect: 'h:1',
      json: true,
      timeoutMs: 500,
    });
    expect(parseCommandLine(['watch', 'tree', '/'])).toMatchObject({ kind: 'view', view: 'tree', watch: true, connect: '127.0.0.1:2181', timeoutMs: 10_000 });
    expect(parseCommandLine(['queue', '--help'])).toEqual({ kind: 'help', topic: 'queue' });
  });

  it('refuses a bad command line with a usage error', () => {
    for (const argv of [['nope', '/a'], ['locks'], ['locks', 'a'], ['locks', '/a', '--timeout-ms', '1.5'], ['watch', 'watch', '/a']]) {
      let caught: unknown;
      try {
        parseCommandLine(argv);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(CliError);
      expect((caught as CliError).exitCode).toBe(ExitCode.USAGE);
    }
  });
});
