// Fails when the tree's TypeScript files import each other in a circle, type-only imports
// included: a circle means no file of it can be read, tested or moved without the others.
// Run by `npm run lint`. Reads the imports with TypeScript's own pre-processor, so it needs
// nothing beyond the compiler the project already builds with.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f !== '' && !f.endsWith('.d.ts') && existsSync(join(root, f)));
const known = new Set(files);

// Circles kept knowingly, each with its reason. Empty this list; never grow it.
const KNOWN = [];
const isKnown = (circle) => KNOWN.some((k) => k.length === circle.length && k.every((f, i) => f === circle[i]));

function resolve(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = normalize(join(dirname(from), specifier));
  return [`${base}.ts`, join(base, 'index.ts'), base].find((candidate) => known.has(candidate));
}

const edges = new Map();
for (const file of files) {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
  edges.set(file, [...new Set(importedFiles.map((i) => resolve(file, i.fileName)).filter((f) => f !== undefined))]);
}

// Tarjan's strongly connected components: every component of two files or more is a circle.
let index = 0;
const stack = [];
const state = new Map();
const circles = [];
function visit(file) {
  const mine = { index, low: index, onStack: true };
  index += 1;
  state.set(file, mine);
  stack.push(file);
  for (const next of edges.get(file)) {
    const seen = state.get(next);
    if (seen === undefined) {
      visit(next);
      mine.low = Math.min(mine.low, state.get(next).low);
    } else if (seen.onStack) {
      mine.low = Math.min(mine.low, seen.index);
    }
  }
  if (mine.low !== mine.index) return;
  const component = [];
  let member;
  do {
    member = stack.pop();
    state.get(member).onStack = false;
    component.push(member);
  } while (member !== file);
  component.sort();
  if ((component.length > 1 || edges.get(file).includes(file)) && !isKnown(component)) circles.push(component);
}
for (const file of files) if (!state.has(file)) visit(file);

if (circles.length > 0) {
  for (const circle of circles) {
    const members = new Set(circle);
    console.error(`import circle of ${circle.length} files:`);
    for (const file of circle) for (const next of edges.get(file)) if (members.has(next)) console.error(`  ${file} -> ${next}`);
  }
  process.exit(1);
}
console.log(`no import circle among ${files.length} TypeScript files`);
