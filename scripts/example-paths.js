// Lets the examples import 'zk-recipes', 'zk-recipes/testing' and 'zk-recipes/internals' as a
// user would, and resolves those names to this repository's sources: `npm run example -- <name>`
// runs an example exactly as it is written. (tsconfig.json maps the same names for the type check.)
const Module = require('node:module');
const { join } = require('node:path');

const root = join(__dirname, '..');
const SOURCES = {
  'zk-recipes': join(root, 'index.ts'),
  'zk-recipes/testing': join(root, 'testing.ts'),
  'zk-recipes/internals': join(root, 'internals.ts'),
};

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return resolveFilename.call(this, SOURCES[request] ?? request, ...rest);
};
