// `npm run migrate` migrates the database the operator names. It used an external server only when
// DATABASE_URL was set, so the documented `MIGRATION_DATABASE_URL=... npm run migrate` migrated a
// local embedded database instead and exited 0. Under NODE_ENV=production it never falls back to an
// embedded database: no URL is an error naming the variable.
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '@/lib/db/embedded.ts';
import { migrationNames } from '@/lib/ops/preflight.ts';
import { runScript, scriptEnv } from '../helpers/processes.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'ledger-migrate-'));
chmodSync(dir, 0o755); // an embedded PostgreSQL's initdb may run as another user
const dataDir = path.join(dir, 'data');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The embedded demo's settings, pointed at a folder and port of this test: nothing may use them. */
const demoEnv = async () => ({ LEDGER_DATA_DIR: dataDir, EMBEDDED_POSTGRES_PORT: String(await freePort()) });

describe('npm run migrate', () => {
  it('with MIGRATION_DATABASE_URL alone, migrates that database and starts no embedded one', async () => {
    const name = `t_migrate_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: inject('ownerUrl') });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      const url = new URL(inject('ownerUrl'));
      url.pathname = `/${name}`;
      const r = await runScript(
        'scripts/migrate.ts',
        scriptEnv({ NODE_ENV: 'development', MIGRATION_DATABASE_URL: url.toString(), ...(await demoEnv()) }),
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('[migrate] using the PostgreSQL server named by MIGRATION_DATABASE_URL');
      expect(r.stdout).toContain('[migrate] applied: ');
      const inside = new pg.Client({ connectionString: url.toString() });
      await inside.connect();
      const applied = await inside.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL',
      );
      await inside.end();
      expect(applied.rows[0]!.n).toBe(migrationNames().length);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('under NODE_ENV=production with no database URL: exit 1 naming MIGRATION_DATABASE_URL, no embedded database', async () => {
    const r = await runScript('scripts/migrate.ts', scriptEnv({ NODE_ENV: 'production', ...(await demoEnv()) }));
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      '[migrate] MIGRATION_DATABASE_URL (or DATABASE_URL) is not set: under NODE_ENV=production no embedded database is started',
    );
    expect(existsSync(dataDir)).toBe(false);
  });
});
