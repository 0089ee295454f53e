import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules', 'dist', '.test-dist', 'data', 'bench/results', 'console/dist', 'test-results'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // CommonJS configuration files of the tools (dependency-cruiser reads .cjs).
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Prettier wraps code at 120 columns; this holds comments to it too. A string, a template or a
      // URL may run longer: split, it would read worse in an error message or a grep.
      'max-len': [
        'error',
        {
          code: 120,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreRegExpLiterals: true,
          ignoreUrls: true,
        },
      ],
    },
  },
  // One owner per table (docs/architecture.md, "Where things go", a table): queries are built only
  // in the owners' repositories (`repository.ts`, `<aggregate>-repository.ts`), in store/ and in
  // migrations; every other file calls the owner's functions (a statement over several owners'
  // tables is built by the owner of the table it is about, with the others' parts handed in).
  {
    files: ['src/**/*.ts'],
    ignores: ['src/store/**', 'src/**/repository.ts', 'src/**/*-repository.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            'CallExpression[callee.property.name=/^(selectFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto)$/]',
          message: "Build queries in the table's owner (a repository.ts or *-repository.ts) and call it from here.",
        },
        {
          selector: "TaggedTemplateExpression[tag.name='sql'], CallExpression[callee.object.name='sql']",
          message: "SQL belongs to the table's owner (a repository.ts or *-repository.ts) or to store/.",
        },
      ],
    },
  },
  // Generated from the OpenAPI document (npm run sdk:generate): its lines are the descriptions'.
  { files: ['sdk/src/schema.d.ts'], rules: { 'max-len': 'off' } },
  {
    files: ['bin/**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
