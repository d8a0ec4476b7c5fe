// One lint config for the whole workspace. Type-aware rules read the one program `pnpm typecheck`
// builds (tsconfig.check.json): the project service would build a program per package, each with
// its dependencies' sources in it again.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'results/**', '.tools/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // Production code of the services: an object literal with a getter or setter gets a V8
    // hidden class of its own, in the old generation, which keeps whatever the accessor's closure
    // reaches alive through young-generation collections; made per request, it promotes whole
    // requests. Use a class.
    files: ['apps/*/src/**/*.ts', 'packages/*/src/**/*.ts', 'tooling/*/src/**/*.ts'],
    ignores: ['**/*.test.ts', '**/testing/**', '**/test/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ObjectExpression > Property[kind=/^(get|set)$/]',
          message:
            'An object literal with an accessor gets a hidden class of its own (kept in the old generation with its closure): use a class with the accessor on its prototype.',
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    // Plain scripts run on Node.
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly' },
    },
  },
);
