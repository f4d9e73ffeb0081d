// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '**/generated/**',
      '.state/**',
      'clients/**',
      'native/target/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // The native module's own scripts (smoke test, bench, fixtures) run on plain Node.
    files: ['native/**/*.mjs'],
    languageOptions: {
      globals: {
        console: 'readonly',
        process: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        performance: 'readonly',
      },
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Type-aware rules for the TypeScript sources: a promise nobody awaits loses its errors
    // (an unhandled rejection ends the process), and a promise passed where a callback's
    // return is ignored (an event handler, forEach) does the same.
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
);
