// ESLint flat config: the recommended rules of ESLint and typescript-eslint.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'out/', 'node_modules/', '.cache/', 'artifacts/', '*.vsix'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
      curly: 'error',
      'no-restricted-imports': 'off',
    },
  },
  {
    // The pure view model must stay testable without VS Code; it may import
    // only the generated protocol (pure data and types).
    files: ['src/model.ts', 'src/commandIds.ts', 'src/executable.ts', 'src/protocol.gen.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: ['vscode'], patterns: [{ group: ['./*', '../*', '!./protocol.gen'] }] }],
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: {
      globals: { console: 'readonly', process: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly', Buffer: 'readonly', setInterval: 'readonly', clearInterval: 'readonly' },
    },
  },
);
