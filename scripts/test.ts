// `npm test`: the type check, unit and integration tests (vitest, real PostgreSQL 18, embedded), the
// PostgreSQL-facing tests again on the oldest supported major (15), then the browser tests (Playwright
// in Chromium) once there are any. Exits non-zero when any step fails.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

function run(step: string, command: string, args: string[], env: Record<string, string> = {}): void {
  console.log(`\n=== ${step}: ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, {
    stdio: 'inherit',
    env: { ...process.env, FORCE_COLOR: process.env.CI ? '0' : '1', ...env },
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
// The tests that exercise what differs between PostgreSQL majors: the SQL functions and triggers,
// the migrations and roles, the audit SQL, the claims' locking. About two minutes.
const OLDEST_POSTGRES_TESTS = [
  'sql-functions',
  'migrations',
  'db-init',
  'ledger-row-privileges',
  'ledger-states',
  'ledger-refusals',
  'ledger-epochs',
  'plan-freeze',
  'claim',
  'claim-batch',
  'claim-peek-store',
  'audit-trail',
  'audit-verification',
  'audit-checkpoint',
  'audit-tree',
  'keyset-microseconds',
  'retention',
].map((name) => `tests/integration/${name}.test.ts`);
// Debian's postgresql-15 (.ci/run installs it); LEDGER_TEST_PG_BIN names another installation.
const oldestBin = process.env.LEDGER_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';
if (existsSync(path.join(oldestBin, 'postgres'))) {
  run(
    'integration on the oldest supported PostgreSQL',
    'npx',
    ['--no-install', 'vitest', 'run', '--project', 'integration', ...OLDEST_POSTGRES_TESTS],
    { LEDGER_TEST_PG_BIN: oldestBin },
  );
} else if (process.env.CI) {
  console.error(`\nno PostgreSQL in ${oldestBin}: CI runs the oldest supported major (apt-get install postgresql-15)`);
  process.exit(1);
} else {
  console.log(
    `\n=== skipped: the oldest supported PostgreSQL (no ${oldestBin}; apt-get install postgresql-15 runs it)`,
  );
}
const e2e = existsSync('tests/e2e') && readdirSync('tests/e2e').some((f) => f.endsWith('.spec.ts'));
if (e2e && existsSync('playwright.config.ts')) run('browser', 'npx', ['--no-install', 'playwright', 'test']);
