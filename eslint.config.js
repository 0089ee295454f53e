import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules', 'dist', 'data', 'bench/results', 'console/dist', 'test-results'] },
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
  // Generated from the OpenAPI document (npm run sdk:generate): its lines are the descriptions'.
  { files: ['sdk/src/schema.d.ts'], rules: { 'max-len': 'off' } },
  {
    files: ['bin/**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
