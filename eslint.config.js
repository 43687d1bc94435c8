import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'cdk.out/',
      '.local/',
      'test-output/',
      'coverage/',
      'reports/',
      '.stryker-tmp*/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': 'off',
    },
  },
  {
    // The core owns the protocol and its ports; it must never reach for an AWS SDK directly.
    files: ['lambdas/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@aws-sdk/*', '../adapters/*', '../handlers/*'] }],
    },
  },
);
