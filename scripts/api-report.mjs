// The API reports: etc/zk-recipes.api.md (the main entry) and etc/zk-recipes-testing.api.md
// (zk-recipes/testing), from the build's declarations (run `npm run build` first).
//
//   node scripts/api-report.mjs           check: fails when the public surface differs from a report
//   node scripts/api-report.mjs --update  write the reports (commit them with the change)
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const update = process.argv.includes('--update');
let failed = false;

const ENTRIES = { 'api-extractor.json': 'zk-recipes', 'api-extractor.testing.json': 'zk-recipes/testing' };

for (const [config, entry] of Object.entries(ENTRIES)) {
  const prepared = ExtractorConfig.loadFileAndPrepare(join(root, config));
  const result = Extractor.invoke(prepared, {
    localBuild: update,
    // The bundled compiler is a version apart from ours; saying so on every run is noise.
    messageCallback: (message) => {
      if (message.messageId === 'console-compiler-version-notice' || message.messageId === 'console-preamble') message.handled = true;
    },
  });
  if (!result.succeeded) {
    failed = true;
    const report = prepared.reportFilePath ?? prepared.reportConfigs?.[0]?.fileName ?? config;
    console.error(
      result.apiReportChanged
        ? `The public API of ${entry} differs from ${report}.\n` +
            'If the change is on purpose, run `npm run api` and commit the updated report; otherwise undo it.'
        : `${config}: API Extractor found ${result.errorCount} error(s) and ${result.warningCount} warning(s).`,
    );
  }
}
process.exitCode = failed ? 1 : 0;
