import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '.hearth/**',
      '.hearth-test/**',
      // The benchmark's working copies (the load harness among them).
      '.hearth-bench/**',
      'artifacts/**',
      'coverage/**',
      'docs/sdk/**',
      'apps/docs/content/**',
      'apps/docs/build/**',
      'apps/docs/.docusaurus/**',
      'apps/docs/.generate/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['warn', 'error'] }],
      eqeqeq: ['error', 'smart'],
    },
  },
  {
    files: ['**/*.test.ts', 'tools/**', '**/*.mjs', 'apps/cli/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // The docs site's client modules run in the reader's browser.
    files: ['apps/docs/src/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
