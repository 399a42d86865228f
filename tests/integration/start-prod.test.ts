// Production mode's refusals (issue 17): `npm run start:prod` checks its environment, the database
// and the build before any server starts, so these run without a `next build`. Each refusal is one
// line naming the problem, exit code 1, and nothing is written to the database.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { migrationNames } from '@/lib/ops/preflight.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { runScript, scriptEnv } from '../helpers/processes.ts';

const SCRIPT = 'scripts/start-prod.ts';
const secrets = { NEXTAUTH_SECRET: 'x'.repeat(32), NEXTAUTH_URL: 'https://ledger.example.com', NODE_ENV: 'production' };

describe('npm run start:prod refuses before serving', () => {
  it('names every missing required variable on its own line and exits 1', async () => {
    const r = await runScript(SCRIPT, scriptEnv({ NEXTAUTH_URL: 'https://ledger.example.com', NEXTAUTH_SECRET: '  ' }));
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\[start:prod\] DATABASE_URL is not set: /);
    expect(lines[1]).toMatch(/^\[start:prod\] NEXTAUTH_SECRET is not set: /);
    expect(r.stdout).toBe('');
  });

  it('refuses a database with a migration of this build not applied, naming it and `npm run migrate`', async () => {
    const t = await createTestDatabase({ poolSize: 2 });
    const last = migrationNames().at(-1)!;
    await t.owner('DELETE FROM _prisma_migrations WHERE migration_name = $1', [last]);
    const users = await t.owner('SELECT count(*)::int AS n FROM app_user');
    const r = await runScript(SCRIPT, scriptEnv({ ...secrets, DATABASE_URL: t.appUrl }));
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`missing 1 migration of this build (${last})`);
    expect(r.stderr).toContain('`npm run migrate`');
    // Production never seeds: nobody was added.
    expect((await t.owner('SELECT count(*)::int AS n FROM app_user')).rows).toEqual(users.rows);
  });

  it('counts every migration as pending on an empty database', async () => {
    const name = `t_empty_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: inject('ownerUrl') });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      const url = new URL(inject('ownerUrl'));
      url.pathname = `/${name}`;
      const r = await runScript(SCRIPT, scriptEnv({ ...secrets, DATABASE_URL: url.toString() }));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`missing ${migrationNames().length} migrations of this build`);
      // Nothing was created in it: applying migrations is `npm run migrate`'s job, not the server's.
      const inside = new pg.Client({ connectionString: url.toString() });
      await inside.connect();
      const tables = await inside.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`);
      await inside.end();
      expect(tables.rows[0].n).toBe(0);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('refuses a malformed OIDC_ROLE_MAP, naming the variable and the entry, before reaching the database', async () => {
    const unreachable = 'postgres://nobody:x@127.0.0.1:1/none';
    for (const [map, problem] of [
      ['ledger-ops=operator,Ledger, Ops=admin', 'OIDC_ROLE_MAP: "Ledger" is not group=role'],
      ['[{"group": "Ledger, Ops", "role": "boss"}]', 'OIDC_ROLE_MAP: "boss" in entry 1 is not a role'],
    ]) {
      const r = await runScript(SCRIPT, scriptEnv({ ...secrets, DATABASE_URL: unreachable, OIDC_ROLE_MAP: map }));
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toEqual([
        expect.stringContaining(`[start:prod] Invalid environment: ${problem}`),
      ]);
    }
  });

  it('refuses an unreachable database, naming DATABASE_URL', async () => {
    const r = await runScript(SCRIPT, scriptEnv({ ...secrets, DATABASE_URL: 'postgres://nobody:x@127.0.0.1:1/none' }));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^\[start:prod\] cannot reach the database named by DATABASE_URL: /);
  });

  it('refuses to start without a production build, naming `npm run build`', async () => {
    const t = await createTestDatabase({ poolSize: 2 });
    // A directory with no .next (and no migrations of its own to compare): only the build is missing.
    const dir = mkdtempSync(path.join(tmpdir(), 'ledger-prod-'));
    try {
      const r = await runScript(SCRIPT, scriptEnv({ ...secrets, DATABASE_URL: t.appUrl }), dir);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe('[start:prod] no production build here: run `npm run build` first');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
