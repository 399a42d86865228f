// A worker holds session advisory locks (its leadership, its replay chunks), which a transaction-mode
// pooler cannot keep: through one, two workers would both lead and a chunk's lock would guard nothing.
// `npm run worker` refuses a DATABASE_URL marked pgbouncer=true (the mark the web processes use for
// PgBouncer, lib/db/client.ts), naming the variable, before it connects to anything.
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.ts';
import { runScript, scriptEnv } from '../helpers/processes.ts';

describe('npm run worker refuses what cannot hold its locks', () => {
  it('a DATABASE_URL marked pgbouncer=true: exit 1 with one line naming DATABASE_URL, nothing connected', async () => {
    // Nothing listens there: a worker that tried to connect would fail with a connection error instead.
    const r = await runScript(
      'scripts/worker.ts',
      scriptEnv({ DATABASE_URL: 'postgres://ledger_app:x@127.0.0.1:1/ledger?pgbouncer=true&sslmode=disable' }),
    );
    expect(r.code).toBe(1);
    const fatal = `${r.stdout}${r.stderr}`
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: string; msg: string })
      .filter((l) => l.level === 'fatal');
    expect(fatal).toHaveLength(1);
    expect(fatal[0]!.msg).toMatch(/^DATABASE_URL carries pgbouncer=true \(a transaction-mode pooler\)/);
    expect(fatal[0]!.msg).toContain('directly or through a session-mode pool');
    expect(`${r.stdout}${r.stderr}`).not.toContain('ECONNREFUSED');
  });
});

describe('npm run worker on a database without the job engine', () => {
  it('exit 1 naming MIGRATION_DATABASE_URL and `npm run migrate`, not "pg-boss is not installed"', async () => {
    const t = await createTestDatabase({ poolSize: 1 }); // migrated; the job engine never installed
    const r = await runScript('scripts/worker.ts', scriptEnv({ DATABASE_URL: t.appUrl }));
    expect(r.code).toBe(1);
    const fatal = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: string; msg: string })
      .filter((l) => l.level === 'fatal');
    expect(fatal).toHaveLength(1);
    expect(fatal[0]!.msg).toContain('the replay job engine (pg-boss) is not installed');
    expect(fatal[0]!.msg).toContain('MIGRATION_DATABASE_URL');
    expect(fatal[0]!.msg).toContain('`npm run migrate`');
  });
});
