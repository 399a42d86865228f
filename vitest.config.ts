import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `@/x` is the project root, as in tsconfig.json (Next, tsx and Playwright read it from there).
const root = fileURLToPath(new URL('./', import.meta.url));

export default defineConfig({
  resolve: { alias: [{ find: /^@\//, replacement: root }] },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['tests/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['tests/helpers/global-setup.ts'],
          // Each file gets its own database cloned from a migrated template, so files run in parallel.
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
