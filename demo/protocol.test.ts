import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** The machine's monotonic clock, read here without the module under test. */
const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

describe("the demo's clock", () => {
  it("is the machine's monotonic clock, which every process shares: a child's reading falls between two of ours", () => {
    const script = `process.stdout.write(String(require(${JSON.stringify(join(__dirname, 'protocol.ts'))}).now()))`;
    for (let i = 0; i < 3; i++) {
      const before = monotonicMs();
      const child = Number(execFileSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], { encoding: 'utf8' }));
      const after = monotonicMs();
      expect(child).toBeGreaterThanOrEqual(before);
      expect(child).toBeLessThanOrEqual(after);
    }
  });
});
