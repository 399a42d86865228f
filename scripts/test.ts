// `npm test`: the type check, unit and integration tests (vitest, real PostgreSQL), then the browser tests
// (Playwright in Chromium) once there are any. Exits non-zero when any step fails.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

function run(step: string, command: string, args: string[]): void {
  console.log(`\n=== ${step}: ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, {
    stdio: 'inherit',
    env: { ...process.env, FORCE_COLOR: process.env.CI ? '0' : '1' },
  });
  if (result.status !== 0) {
    console.error(`\n${step} failed (exit ${result.status ?? result.signal})`);
    process.exit(result.status ?? 1);
  }
}

// The type gate: `next build` does not type-check (next.config.js), so it runs here, once, first.
run('typecheck', 'npx', ['--no-install', 'tsc', '--noEmit']);
run('lint', process.execPath, ['--import', 'tsx', 'scripts/lint.ts']);
run('unit + integration', 'npx', ['--no-install', 'vitest', 'run']);
const e2e = existsSync('tests/e2e') && readdirSync('tests/e2e').some((f) => f.endsWith('.spec.ts'));
if (e2e && existsSync('playwright.config.ts')) run('browser', 'npx', ['--no-install', 'playwright', 'test']);
