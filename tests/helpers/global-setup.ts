// Starts one PostgreSQL for the whole run (embedded on a free port unless MIGRATION_DATABASE_URL or
// DATABASE_URL names a server, or LEDGER_TEST_PG_BIN names an installation's bin directory: see
// ./fresh-postgres.ts), migrates a template database once, and creates the app login role.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { freePort, startEmbeddedPostgres, type EmbeddedServer } from '@/lib/db/embedded.ts';
import { applyMigrations } from '@/lib/db/schema-engine.ts';
import { ensureAppLogin, withCredentials } from '@/lib/db/roles.ts';
import { startFreshPostgres, type FreshServer } from './fresh-postgres.ts';

export const TEMPLATE_DB = 'ledger_test_template';
const APP_USER = 'ledger_app_test';
const APP_PASSWORD = 'ledger-app-test';

declare module 'vitest' {
  export interface ProvidedContext {
    ownerUrl: string;
    appUser: string;
    appPassword: string;
    templateDb: string;
  }
}

export default async function setup(project: TestProject) {
  let server: EmbeddedServer | FreshServer | undefined;
  let dir: string | undefined;
  let ownerBase = process.env.MIGRATION_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!ownerBase && process.env.LEDGER_TEST_PG_BIN) {
    const fresh = await startFreshPostgres();
    server = fresh;
    ownerBase = fresh.adminUrl();
    console.log(`tests run on PostgreSQL ${fresh.major} from ${process.env.LEDGER_TEST_PG_BIN}`);
  } else if (!ownerBase) {
    dir = mkdtempSync(path.join(tmpdir(), 'ledger-test-'));
    chmodSync(dir, 0o755);
    const embedded = await startEmbeddedPostgres({
      dir: path.join(dir, 'pg'),
      port: await freePort(),
      password: 'test',
      persistent: false,
      fsync: false,
    });
    server = embedded;
    ownerBase = embedded.ownerUrl();
  }
  const admin = new pg.Client({ connectionString: ownerBase });
  await admin.connect();
  await admin.query(`ALTER DATABASE ${TEMPLATE_DB} WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  await admin.end();
  const templateUrl = withDatabase(ownerBase, TEMPLATE_DB);
  await applyMigrations(templateUrl);
  await ensureAppLogin(templateUrl, APP_USER, APP_PASSWORD);
  // Nobody may stay connected to a template, or CREATE DATABASE ... TEMPLATE fails.
  const closer = new pg.Client({ connectionString: ownerBase });
  await closer.connect();
  await closer.query(`ALTER DATABASE ${TEMPLATE_DB} WITH ALLOW_CONNECTIONS false`);
  await closer.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [TEMPLATE_DB]);
  await closer.end();

  project.provide('ownerUrl', ownerBase);
  project.provide('appUser', APP_USER);
  project.provide('appPassword', APP_PASSWORD);
  project.provide('templateDb', TEMPLATE_DB);

  return async () => {
    if (server) await server.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export { withCredentials };
