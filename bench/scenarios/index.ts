/**
 * Every scenario: each file of this directory that exports `scenario` (index.ts and types.ts
 * aside). Adding a scenario is adding a file.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Scenario } from './types';

export function loadScenarios(): Scenario[] {
  const found: Scenario[] = [];
  for (const file of readdirSync(__dirname).sort()) {
    if (!/\.(ts|js)$/.test(file) || /\.d\.ts$/.test(file) || /^(index|types)\./.test(file)) continue;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- discovery by file
    const mod = require(join(__dirname, file)) as { scenario?: Scenario };
    if (mod.scenario && !found.some((s) => s.name === mod.scenario?.name)) found.push(mod.scenario);
  }
  return found.sort((a, b) => a.order - b.order);
}
