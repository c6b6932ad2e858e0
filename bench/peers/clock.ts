const BASE = process.hrtime.bigint();

/** Microseconds on this process's monotonic clock. */
export function clockUs(): number {
  return Number(process.hrtime.bigint() - BASE) / 1000;
}

/**
 * The in-process overlap check, the same as the drivers': a holder calls `enter()` right after its
 * acquire returns and `leave()` right before it releases. An entry that finds another holder inside
 * is a violation; two overlapping critical sections always produce one.
 */
export class HoldCounter {
  private holders = 0;
  violations = 0;

  enter(): void {
    this.holders++;
    if (this.holders !== 1) this.violations++;
  }

  leave(): void {
    this.holders--;
  }
}
