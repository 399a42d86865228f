// docs/DEPLOYMENT.md's "First deployment" run as written, against a fresh PostgreSQL (the embedded
// one, or the installation LEDGER_TEST_PG_BIN names): its first shell block with ADMIN_DATABASE_URL
// set to the fresh server's administrator (`npm ci` and `npm run build` are what the checkout
// already did, so they are the only lines left out), then each line of its second block started
// with the env file the first block wrote, ready, and stopped with SIGTERM (exit 0). The first admin
// it created is in the database; the web process answers /readyz 200.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@/lib/db/embedded.ts';
import { nextCli } from '@/scripts/support/processes.ts';
import { startFreshPostgres, type FreshServer } from '../helpers/fresh-postgres.ts';
import { descendants, ROOT, scriptEnv, startScript, type Started } from '../helpers/processes.ts';

const ENV_FILE = path.join(ROOT, 'ledger.env');
let server: FreshServer;
const started: Started[] = [];
beforeAll(async () => {
  server = await startFreshPostgres();
}, 120_000);
afterAll(async () => {
  for (const s of started.filter((x) => x.child.exitCode === null)) {
    for (const pid of descendants(s.child.pid!)) process.kill(pid, 'SIGKILL');
    s.child.kill('SIGKILL');
  }
  rmSync(ENV_FILE, { force: true });
  await server?.stop();
});

/** The shell blocks of the section, in order. */
function firstDeploymentBlocks(): string[] {
  const doc = readFileSync(path.join(ROOT, 'docs/DEPLOYMENT.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## First deployment'));
  const body = section.slice(0, section.indexOf('\n## ', 5));
  return [...body.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

const commands = (block: string) =>
  block
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

describe('docs/DEPLOYMENT.md, first deployment, as written', () => {
  it(
    'sets up a fresh PostgreSQL, migrates, creates the first admin; the processes start and stop',
    { timeout: 900_000 },
    async () => {
      const [setup, start] = firstDeploymentBlocks();
      const lines = commands(setup!);
      expect(lines[0]).toBe('npm ci');
      expect(lines[1]).toMatch(/^npm run build\b/);
      const script = ['set -euo pipefail', ...lines.slice(2)].join('\n');
      const email = 'ana@example.com';
      expect(script).toContain(email);

      const base = scriptEnv({ ADMIN_DATABASE_URL: server.adminUrl(), npm_config_update_notifier: 'false' });
      const ran = spawnSync('bash', ['-c', script], { cwd: ROOT, env: base, encoding: 'utf8' });
      expect(ran.status, `${ran.stdout}\n${ran.stderr}`).toBe(0);
      expect(ran.stderr).toContain('[db:init] database effect_ledger: created');
      expect(readFileSync(ENV_FILE, 'utf8')).toMatch(/^DATABASE_URL=postgresql:\/\/ledger_app_login:/m);
      const admin = new pg.Client({ connectionString: server.adminUrl('effect_ledger') });
      await admin.connect();
      const users = await admin
        .query(`SELECT role::text AS role FROM app_user WHERE email = $1`, [email])
        .finally(() => admin.end());
      expect(users.rows).toEqual([{ role: 'admin' }]);

      if (!existsSync(path.join(ROOT, '.next/BUILD_ID'))) {
        const build = spawnSync(process.execPath, [nextCli(), 'build'], { cwd: ROOT, stdio: 'inherit' });
        expect(build.status).toBe(0);
      }
      const port = await freePort();
      const processEnv = {
        ...base,
        NEXTAUTH_SECRET: 's'.repeat(32),
        NEXTAUTH_URL: `http://127.0.0.1:${port}`,
        PORT: String(port),
        LISTEN_HOST: '127.0.0.1',
      };
      const ready: Record<string, RegExp> = {
        'npm run start:prod': /"msg":"listening"/,
        'npm run worker': /"msg":"worker ready/,
      };
      const starts = commands(start!).map((l) => l.replace(/\s+#.*$/, ''));
      expect(starts.sort()).toEqual(Object.keys(ready).sort());
      for (const line of starts) {
        // The env file the first block wrote, as a process manager's EnvironmentFile would give it.
        const p = startScript(['-c', `set -a; . ./ledger.env; set +a; exec ${line}`], processEnv, ROOT, 'bash');
        started.push(p);
        await p.waitFor(ready[line]!);
        if (line === 'npm run start:prod') expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
        p.child.kill('SIGTERM');
        expect(await p.exited, p.output().slice(-2000)).toBe(0);
      }
    },
  );
});
