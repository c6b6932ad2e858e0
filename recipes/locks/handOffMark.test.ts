import type { Stat } from '../../src/recipeKit';
import { HandOffMarkReader } from './handOffMark';
import { REVOKE_MESSAGE } from './LockMonitor';

function stat(version: number): Stat {
  return {
    czxid: 1n,
    mzxid: 1n + BigInt(version),
    ctime: 0,
    mtime: 0,
    version,
    cversion: 0,
    aversion: 0,
    ephemeralOwner: 7n,
    dataLength: 0,
    numChildren: 0,
    pzxid: 1n,
  };
}

/** Feeds `reads` (bytes, version) to a new reader; what each read answered, and whether it ends marked. */
function feed(reads: Array<[string, number]>): { answers: boolean[]; marked: boolean } {
  const reader = new HandOffMarkReader();
  const answers = reads.map(([data, version]) => reader.read(Buffer.from(data, 'latin1'), stat(version)));
  return { answers, marked: reader.marked };
}

describe('the hand-off mark, as a waiter reads it', () => {
  it('is the node read at version 0 and then at version 1 with the same bytes', () => {
    expect(feed([['10.0.0.7', 0], ['10.0.0.7', 1]])).toEqual({ answers: [false, true], marked: true });
    expect(feed([['', 0], ['', 1]])).toEqual({ answers: [false, true], marked: true });
    expect(feed([['\u00ff\u0000b', 0], ['\u00ff\u0000b', 1]])).toEqual({ answers: [false, true], marked: true });
  });

  it('stays marked, and says so once, whatever is read after', () => {
    expect(feed([['a', 0], ['a', 1], [REVOKE_MESSAGE, 2], ['a', 1]])).toEqual({ answers: [false, true, false, false], marked: true });
  });

  it('is not a node first read at a later version: what was written before is not known', () => {
    expect(feed([['a', 1]]).marked).toBe(false);
    expect(feed([['a', 1], ['a', 1]]).marked).toBe(false);
    expect(feed([['a', 2], ['a', 0], ['a', 2]]).marked).toBe(false);
  });

  it("is not another party's write: other bytes, Curator's revocation, or a second write", () => {
    expect(feed([['a', 0], ['b', 1]]).marked).toBe(false);
    expect(feed([['a', 0], ['ab', 1]]).marked).toBe(false);
    expect(feed([['a', 0], [REVOKE_MESSAGE, 1]]).marked).toBe(false);
    expect(feed([['a', 0], ['a', 2]]).marked).toBe(false);
    // A node made with the revocation message as its data: its holder's own rewrite cannot be told from a revocation.
    expect(feed([[REVOKE_MESSAGE, 0], [REVOKE_MESSAGE, 1]]).marked).toBe(false);
  });
});
