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

/**
 * The read-write lock's in-process overlap check: `enter(write)` right after an acquire returns,
 * `leave(write)` right before the release. A writer entering while anyone is inside, or a reader
 * entering while a writer is, is a violation; any overlap of a writer's critical section with
 * another one produces one. Readers inside together are not (`maxReaders` says how many were).
 */
export class RwHoldCounter {
  private readers = 0;
  private writers = 0;
  violations = 0;
  maxReaders = 0;

  enter(write: boolean): void {
    if (write) {
      if (this.readers !== 0 || this.writers !== 0) this.violations++;
      this.writers++;
    } else {
      if (this.writers !== 0) this.violations++;
      this.readers++;
      if (this.readers > this.maxReaders) this.maxReaders = this.readers;
    }
  }

  leave(write: boolean): void {
    if (write) this.writers--;
    else this.readers--;
  }
}
