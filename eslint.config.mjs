import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The floors, bottom to top: the wire (src/protocol, src/transport), the client (the rest of src),
// the recipes (recipes/), and above them the CLI and the tools. An import may only run down.
// The patterns are regular expressions over the import's specifier: every import in the tree is relative.
const noCli = { regex: '^(\\.\\.?/)+cli(/|$)', message: 'The CLI stands above the library: nothing in src/ or recipes/ imports it.' };

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/protocol/**', 'src/transport/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noCli] }] },
  },
  {
    files: ['src/protocol/**/*.ts', 'src/transport/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            noCli,
            { regex: '^(\\.\\.?/)+(client|recipeKit|recipes)(/|$)', message: 'The wire floor knows nothing of the client or the recipes above it.' },
          ],
        },
      ],
    },
  },
  {
    files: ['recipes/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            noCli,
            { regex: '^(\\.\\./)+src(?!/recipeKit$)(/|$)', message: 'Recipes use the client floor through src/recipeKit only: add what is missing there.' },
          ],
        },
      ],
    },
  },
);
