// `npm start`: the demo. PostgreSQL (embedded unless DATABASE_URL is set), migrations, demo data on
// an empty embedded database (on DATABASE_URL's only with `-- --seed-demo`, and never under
// NODE_ENV=production: scripts/seed.ts), a production build when sources changed, then the console on
// http://localhost:3000 (served by the production web server, scripts/support/web-server.ts) plus the
// background worker (forced replays and reconciliation). Production runs `npm run start:prod` and
// `npm run worker` instead (docs/DEPLOYMENT.md): they never seed.
// SIGTERM or SIGINT stops the console and the worker (each gets SHUTDOWN_GRACE_SECONDS to finish what
// it holds), then the sandbox and the embedded PostgreSQL, and exits 0 with no process left behind.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { env } from '../lib/env.ts';
import { provisionDatabase } from '../lib/db/provision.ts';
import { startSandbox } from '../lib/providers/sandbox/server.ts';
import { demoSeedWanted, seedIfEmpty } from './seed.ts';
import { nextBuildIsFresh } from './support/next-build.ts';
import { nextCli, ownStopSignals, spawnGroup, stopGroups, type GroupChild } from './support/processes.ts';
import { WORKER_NODE_ARGS } from './support/worker-args.ts';

const say = (line: string) => console.log(`[start] ${line}`);

function authSecret(dataDir: string): string {
  if (env().NEXTAUTH_SECRET) return env().NEXTAUTH_SECRET!;
  const file = path.join(dataDir, 'nextauth-secret');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}

async function main() {
  const dev = process.argv.includes('--dev');
  const port = env().PORT;
  const dataDir = path.resolve(env().LEDGER_DATA_DIR);
  const database = await provisionDatabase({ log: say });
  const children: GroupChild[] = [];
  let stopping = false;
  let sandboxStop: (() => Promise<void>) | undefined;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping: the console and the worker finish what they hold...');
    const killed = await stopGroups(children, env().SHUTDOWN_GRACE_SECONDS * 1000);
    if (killed.length) say(`killed after the grace period: ${killed.join(', ')}`);
    await sandboxStop?.().catch(() => {});
    await database.stop().catch(() => {});
    say('stopped');
    process.exit(code);
  };
  ownStopSignals(() => void stop(0));

  try {
    if (database.appliedMigrations.length) say(`applied migrations: ${database.appliedMigrations.join(', ')}`);
    const childEnv = {
      ...process.env,
      DATABASE_URL: database.appUrl,
      MIGRATION_DATABASE_URL: database.ownerUrl,
      NEXTAUTH_SECRET: authSecret(dataDir),
      NEXTAUTH_URL: env().NEXTAUTH_URL ?? `http://localhost:${port}`,
      PORT: String(port),
    };
    // The demo's email provider: a real HTTP service that keeps what it delivered while we run.
    const sandbox = await startSandbox({ port: env().SANDBOX_PORT, host: '127.0.0.1' });
    (childEnv as Record<string, string>).LEDGER_PROVIDERS ??= JSON.stringify({
      sandbox: { type: 'sandbox', url: sandbox.url },
    });
    sandboxStop = () => sandbox.stop();
    const production = env().NODE_ENV === 'production';
    const demo = demoSeedWanted({
      embedded: database.embedded !== null,
      asked: process.argv.includes('--seed-demo'),
      production,
    });
    if (!demo)
      say(
        production
          ? 'NODE_ENV=production: nothing is seeded (npm run user:create adds people)'
          : 'DATABASE_URL names a database of its own: no demo data is written (npm start -- --seed-demo writes it into an empty one)',
      );
    const seeded = production
      ? { admin: null, demoPassword: null, demoUsers: [] }
      : await seedIfEmpty({ appUrl: database.appUrl, sandboxUrl: sandbox.url, log: say, demo });

    if (!dev && !nextBuildIsFresh()) {
      say('building the console (first start, or sources changed)...');
      const build = spawnSync('npx', ['--no-install', 'next', 'build'], { stdio: 'inherit', env: childEnv });
      if (build.status !== 0) throw new Error('next build failed');
    }
    // The same web server as production (its front serves the agent API without Next's request
    // pipeline, and vouches for the client address); `--dev` runs Next's development server instead.
    const next = dev
      ? spawnGroup('console', process.execPath, [nextCli(), 'dev', '-p', String(port)], {
          stdio: ['ignore', 'inherit', 'inherit'],
          env: childEnv,
        })
      : spawnGroup('console', process.execPath, ['--import', 'tsx', 'scripts/support/web-server.ts'], {
          stdio: ['ignore', 'inherit', 'inherit'],
          env: { ...childEnv, NODE_ENV: 'production' },
        });
    children.push(next);
    // The console ending on its own (a crash) ends the demo with an error.
    void next.exited.then(() => stop(1));
    const worker = spawnGroup(
      'worker',
      process.execPath,
      [...WORKER_NODE_ARGS, '--import', 'tsx', 'scripts/worker.ts'],
      {
        stdio: ['ignore', 'inherit', 'inherit'],
        env: childEnv,
      },
    );
    children.push(worker);

    say('');
    say(`Effect Ledger console: http://localhost:${port}`);
    if (seeded.admin)
      say(`Sign in as ${seeded.admin.email} with the one-time password ${seeded.admin.password} (shown once).`);
    else say('Sign in with the admin account created on the first start (npm run user:create adds users).');
    if (seeded.demoPassword) {
      say(
        `Demo people (password ${seeded.demoPassword}, shown once): ${seeded.demoUsers.map((u) => `${u.email} (${u.role})`).join(', ')}`,
      );
    }
    say(
      database.embedded
        ? `Stop with Ctrl+C (the embedded PostgreSQL stops with it; its data stays in ${path.relative(process.cwd(), dataDir) || dataDir}/).`
        : 'Stop with Ctrl+C (the database named by DATABASE_URL keeps running).',
    );
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    await stop(1);
  }
}

await main();
