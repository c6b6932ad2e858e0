// npm run example -- <name>: runs examples/<name>.ts from the sources (see example-paths.js).
const { readdirSync } = require('node:fs');
const { join } = require('node:path');

const dir = join(__dirname, '..', 'examples');
const names = readdirSync(dir)
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.slice(0, -3))
  .sort();
const name = process.argv[2];
if (!names.includes(name)) {
  console.error(`${name === undefined ? 'Which example?' : `No example "${name}".`} Run one of:\n${names.map((n) => `  npm run example -- ${n}`).join('\n')}`);
  process.exit(2);
}
// The example sees its own arguments, as when it is run on its own.
process.argv.splice(1, 2, join(dir, `${name}.ts`));
require(join(dir, `${name}.ts`));
