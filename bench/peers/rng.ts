/**
 * The read-or-write choice of the `rwlock` scenario: xorshift32 (Marsaglia), seeded per session,
 * written the same way in CuratorBench.java and kazoo_driver.py, so that session k of every library
 * makes the same sequence of choices.
 */

/** Session k's seed: never 0 (xorshift's one fixed point). */
export function sessionSeed(k: number): number {
  return (0x9e3779b9 ^ Math.imul(k + 1, 0x85ebca6b)) >>> 0 || 1;
}

export class XorShift32 {
  private x: number;

  constructor(seed: number) {
    this.x = seed >>> 0 || 1;
  }

  /** The next value, an unsigned 32-bit integer. */
  next(): number {
    let x = this.x;
    x = (x ^ (x << 13)) >>> 0;
    x = (x ^ (x >>> 17)) >>> 0;
    x = (x ^ (x << 5)) >>> 0;
    this.x = x;
    return x;
  }

  /** Whether this turn writes: the next value mod 100 below `writePercent`. */
  writes(writePercent: number): boolean {
    return this.next() % 100 < writePercent;
  }
}
