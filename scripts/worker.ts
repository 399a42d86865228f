// The replay worker as its own process: chunk handlers on pg-boss, rescue of dead workers' chunks,
// and the reconciler (C1-C3) on start-up and every RECONCILE_INTERVAL_SECONDS. Run several for more
// throughput: `npm run worker`. With MIGRATION_DATABASE_URL set, installs the job schema first.
import { createDb } from '../lib/db/client.ts';
import { env } from '../lib/env.ts';
import { providerRegistryFromEnv } from '../lib/providers/registry.ts';
import '../lib/providers/sandbox/register.ts'; // provider type sandbox
import { installJobEngine, startReplayWorker } from '../lib/replay/index.ts';

async function main() {
  const e = env();
  if (!e.DATABASE_URL) throw new Error('DATABASE_URL is not set (the app role connection)');
  if (e.MIGRATION_DATABASE_URL) await installJobEngine(e.MIGRATION_DATABASE_URL);
  const db = createDb(e.DATABASE_URL, e.REPLAY_CONCURRENCY * 2 + 4);
  const providers = providerRegistryFromEnv();
  const log = (line: string) => console.log(`${new Date().toISOString()} [worker ${process.pid}] ${line}`);
  const worker = await startReplayWorker({
    appUrl: e.DATABASE_URL,
    db,
    providers,
    concurrency: e.REPLAY_CONCURRENCY,
    reconcileIntervalMs: e.RECONCILE_INTERVAL_SECONDS * 1000,
    log,
  });
  log(`ready: ${e.REPLAY_CONCURRENCY} chunk handlers, providers ${providers.names().join(', ') || '(none)'}`);
  const stop = async () => {
    log('stopping');
    await worker.stop();
    await providers.close();
    await db.$disconnect();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
