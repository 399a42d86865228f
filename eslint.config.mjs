// Code rules for every TypeScript file. The architecture rules (layers, cycles, what the SDK may
// import) live in .dependency-cruiser.cjs; formatting is Prettier's (npm run format).
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

const DEEP_RELATIVE = { group: ['../../*'], message: 'use the @/ alias instead of a deep relative import' };
const NEXT_LINK = {
  name: 'next/link',
  message:
    "use Link from '@/components/ui/link.tsx': console routes are rendered per request, and a prefetch only costs the server",
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.next/**',
      '.data/**',
      'lib/db/generated/**',
      'next-env.d.ts',
      'scripts/tmp/**',
      'test-results/**',
      '.sdk-build/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx}'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      // Refusing NUL and other C0 characters in input is done with regexes that name them.
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-restricted-imports': ['error', { paths: [NEXT_LINK], patterns: [DEEP_RELATIVE] }],
    },
  },
  {
    // The one home of next/link: the console's link, which never prefetches.
    files: ['components/ui/link.tsx'],
    rules: { 'no-restricted-imports': ['error', { patterns: [DEEP_RELATIVE] }] },
  },
  {
    files: ['app/**/*.tsx', 'components/**/*.tsx'],
    plugins: { 'react-hooks': reactHooks },
    rules: reactHooks.configs.recommended.rules,
  },
  {
    files: ['**/*.mjs', '**/*.cjs', '*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', module: 'writable', require: 'readonly' } },
  },
  {
    // Playwright fixtures take an empty destructuring pattern by design.
    files: ['tests/e2e/**'],
    rules: { 'no-empty-pattern': 'off' },
  },
  {
    // The product reads its configuration once, in lib/env.ts; scripts and tests may pass an
    // environment on to the processes they start. The effect-ledger CLI is a program of its own in
    // the SDK package, which cannot import lib/env.ts: its bin hands the environment to the CLI.
    files: ['lib/**', 'app/**', 'components/**'],
    ignores: ['lib/env.ts', 'lib/sdk/cli/bin.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'read configuration through lib/env.ts',
        },
      ],
    },
  },
);
