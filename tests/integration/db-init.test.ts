// A database from nothing, as docs/DEPLOYMENT.md sets it up: `npm run db:init` on a fresh PostgreSQL
// creates the owner (no superuser, no CREATEROLE, no CREATEDB), the ledger_app and
// ledger_audit_signer groups, a login in each and the database; the migrations then run as that
// owner (before, they needed CREATEROLE), the worker's job engine included; a second run changes
// nothing and prints no secret. A migration that fails midway leaves nothing of itself, `npm run
// migrate` names the way out, and `--rolled-back <name>` then `npm run migrate` recover.
import { spawn } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationNames } from '@/lib/ops/preflight.ts';
import { startFreshPostgres, type FreshServer } from '../helpers/fresh-postgres.ts';
import { ROOT, scriptEnv } from '../helpers/processes.ts';

let server: FreshServer;
beforeAll(async () => {
  server = await startFreshPostgres();
}, 120_000);
afterAll(() => server?.stop());

function npmRun(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', ...args], {
      cwd: ROOT,
      env: scriptEnv({ NODE_ENV: 'production', npm_config_update_notifier: 'false', ...env }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const envLines = (stdout: string) =>
  Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

describe('npm run db:init, then npm run migrate, on a fresh PostgreSQL', () => {
  let urls: Record<string, string>;

  it(
    'creates least-privileged roles and the database, prints their URLs; the owner migrates',
    { timeout: 300_000 },
    async () => {
      const init = await npmRun(['db:init', '--', '--admin', server.adminUrl()]);
      expect(init.code, init.stderr).toBe(0);
      urls = envLines(init.stdout);
      expect(Object.keys(urls).sort()).toEqual(['AUDIT_SIGNER_DATABASE_URL', 'DATABASE_URL', 'MIGRATION_DATABASE_URL']);
      expect(init.stderr).toContain('[db:init] database effect_ledger: created, owned by ledger_owner');
      expect(new URL(urls.DATABASE_URL!).username).toBe('ledger_app_login'); // never ledger_app itself

      const roles = await query<{
        rolname: string;
        rolsuper: boolean;
        rolcreaterole: boolean;
        rolcreatedb: boolean;
        rolcanlogin: boolean;
      }>(
        server.adminUrl(),
        `SELECT rolname, rolsuper, rolcreaterole, rolcreatedb, rolcanlogin FROM pg_roles WHERE rolname LIKE 'ledger%' ORDER BY rolname`,
      );
      expect(roles).toEqual([
        { rolname: 'ledger_app', rolsuper: false, rolcreaterole: false, rolcreatedb: false, rolcanlogin: false },
        { rolname: 'ledger_app_login', rolsuper: false, rolcreaterole: false, rolcreatedb: false, rolcanlogin: true },
        {
          rolname: 'ledger_audit_signer',
          rolsuper: false,
          rolcreaterole: false,
          rolcreatedb: false,
          rolcanlogin: false,
        },
        { rolname: 'ledger_owner', rolsuper: false, rolcreaterole: false, rolcreatedb: false, rolcanlogin: true },
        {
          rolname: 'ledger_signer_login',
          rolsuper: false,
          rolcreaterole: false,
          rolcreatedb: false,
          rolcanlogin: true,
        },
      ]);
      const publicConnect = await query<{ ok: boolean }>(
        server.adminUrl(),
        `SELECT has_database_privilege('public', 'effect_ledger', 'CONNECT') AS ok`,
      ).catch(() => [{ ok: false }]);
      expect(publicConnect[0]!.ok).toBe(false);

      const migrate = await npmRun(['migrate'], { MIGRATION_DATABASE_URL: urls.MIGRATION_DATABASE_URL! });
      expect(migrate.code, migrate.stderr).toBe(0);
      expect(migrate.stdout).toContain('[migrate] the replay job engine (pg-boss) is installed');
      const applied = await query<{ n: number }>(
        urls.MIGRATION_DATABASE_URL!,
        'SELECT count(*)::int AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL',
      );
      expect(applied[0]!.n).toBe(migrationNames().length);
      // The application login reads the ledger and may not touch the migration history.
      await query(urls.DATABASE_URL!, 'SELECT count(*) FROM effect');
      await expect(query(urls.DATABASE_URL!, `DELETE FROM _prisma_migrations`)).rejects.toThrow(/permission denied/);
      // The signer login, and only it, may store a signed checkpoint.
      expect(
        (
          await query<{ ok: boolean }>(
            urls.AUDIT_SIGNER_DATABASE_URL!,
            `SELECT has_table_privilege('audit_checkpoint', 'INSERT') AS ok`,
          )
        )[0]!.ok,
      ).toBe(true);
      expect(
        (
          await query<{ ok: boolean }>(
            urls.DATABASE_URL!,
            `SELECT has_table_privilege('audit_checkpoint', 'INSERT') AS ok`,
          )
        )[0]!.ok,
      ).toBe(false);
    },
  );

  it('a second run changes nothing and prints no URL', { timeout: 120_000 }, async () => {
    const again = await npmRun(['db:init', '--', '--admin', server.adminUrl()]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('role ledger_owner: exists, kept (password unchanged)');
    expect(again.stderr).toContain('database effect_ledger: exists, owned by ledger_owner, kept');
    await query(urls.DATABASE_URL!, 'SELECT 1'); // the printed passwords still work
  });

  it(
    'a migration that fails leaves nothing of itself; fix, --rolled-back, then migrate, recovers',
    { timeout: 300_000 },
    async () => {
      const ownerUrl = new URL(urls.MIGRATION_DATABASE_URL!);
      ownerUrl.pathname = '/ledger_recovery';
      const owner = ownerUrl.toString();
      // The cause, as the first deployments met it: an owner that may not grant ledger_app, which the
      // audit signer migration needs (before db:init, owners were made without it).
      await query(server.adminUrl(), 'REVOKE ADMIN OPTION FOR ledger_app FROM ledger_owner CASCADE');
      const init = await npmRun(['db:init', '--', '--admin', server.adminUrl(), '--database', 'ledger_recovery']);
      expect(init.code, init.stderr).toBe(0);
      await query(server.adminUrl(), 'REVOKE ADMIN OPTION FOR ledger_app FROM ledger_owner CASCADE');
      const failing = '20261205130500_audit_signer_role';

      const first = await npmRun(['migrate'], { MIGRATION_DATABASE_URL: owner });
      expect(first.code).toBe(1);
      expect(first.stderr).toContain(failing);
      expect(first.stderr).toContain(`npm run migrate -- --rolled-back ${failing}`);
      // Nothing of it stayed (one transaction): the application role still holds what it revokes.
      const canInsert = `SELECT has_table_privilege('ledger_app', 'audit_checkpoint', 'INSERT') AS ok`;
      expect(await query(owner, canInsert)).toEqual([{ ok: true }]);
      const refused = await npmRun(['migrate'], { MIGRATION_DATABASE_URL: owner });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`--rolled-back ${failing}`);

      // The cause fixed as the docs say: db:init again gives the owner back what it needs.
      expect(
        (await npmRun(['db:init', '--', '--admin', server.adminUrl(), '--database', 'ledger_recovery'])).code,
      ).toBe(0);
      const marked = await npmRun(['migrate', '--', '--rolled-back', failing], { MIGRATION_DATABASE_URL: owner });
      expect(marked.code, marked.stderr).toBe(0);
      const recovered = await npmRun(['migrate'], { MIGRATION_DATABASE_URL: owner });
      expect(recovered.code, recovered.stderr).toBe(0);
      const applied = await query<{ n: number }>(
        owner,
        `SELECT count(DISTINCT migration_name)::int AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
      );
      expect(applied[0]!.n).toBe(migrationNames().length);
      expect(await query(owner, canInsert)).toEqual([{ ok: false }]);
    },
  );
});
