// `npm run start:prod`: one console/API process for production, after `npm run build`. It never seeds
// demo data and starts no database, sandbox or worker (`npm run worker` runs those separately, see
// docs/DEPLOYMENT.md). Before the server starts it refuses, with one line per problem and exit code 1:
// a missing DATABASE_URL, NEXTAUTH_SECRET or NEXTAUTH_URL; a database it cannot reach; migrations of
// this build not applied yet (`npm run migrate` applies them); no production build.
// SIGTERM/SIGINT: the server stops accepting connections and finishes in-flight requests within
// SHUTDOWN_GRACE_SECONDS, then this process exits 0 with nothing left behind.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { preparedStatementsFor } from '../lib/db/client.ts';
import { env } from '../lib/env.ts';
import { routeConsoleToLog } from '../lib/ops/console-as-log.ts';
import { missingVariables, pendingMigrations, pendingMigrationsMessage } from '../lib/ops/preflight.ts';
import { spawnGroup, stopGroups } from './support/processes.ts';

// Refusals before anything starts are plain lines on stderr, for the person or unit starting it;
// once running, every line is a JSON object on stdout (routeConsoleToLog below).
const refuse = (lines: string[]): never => {
  for (const line of lines) process.stderr.write(`[start:prod] ${line}\n`);
  process.exit(1);
};

async function main() {
  const missing = missingVariables();
  if (missing.length) refuse(missing);
  let e: ReturnType<typeof env>;
  try {
    e = env();
  } catch (error) {
    return refuse([(error as Error).message]);
  }
  const databaseUrl = preparedStatementsFor(e.DATABASE_URL!).url;
  const pending = await pendingMigrations(databaseUrl).catch((error: Error) =>
    refuse([`cannot reach the database named by DATABASE_URL: ${error.message}`]),
  );
  if (pending.length) refuse([pendingMigrationsMessage(pending)]);
  if (!existsSync(path.resolve('.next/BUILD_ID'))) refuse(['no production build here: run `npm run build` first']);

  const log = routeConsoleToLog('start:prod');
  const server = spawnGroup(
    'console',
    process.execPath,
    ['--import', import.meta.resolve('tsx'), path.join(import.meta.dirname, 'support/web-server.ts')],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, NODE_ENV: 'production' },
    },
  );
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log.info('stopping: finishing in-flight requests');
    const killed = await stopGroups([server], e.SHUTDOWN_GRACE_SECONDS * 1000);
    if (killed.length) log.warn('killed after the grace period');
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  // The server ending on its own is a failure the process manager should see.
  void server.exited.then((code) => {
    if (stopping) return;
    log.error({ code }, `the server exited (${code})`);
    process.exit(1);
  });
  log.info({ port: e.PORT, host: e.LISTEN_HOST }, `console and agent API on port ${e.PORT} (${e.LISTEN_HOST})`);
}

await main();
