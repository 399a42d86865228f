// The replay worker as its own process: chunk handlers on pg-boss in every worker; rescue of dead
// workers' chunks, the sweep of stalled replays and the reconciler (C1-C3, on start-up and every
// RECONCILE_INTERVAL_SECONDS) only in the leader, one worker across all of them (lib/ops/leader.ts).
// Run several for more throughput: `npm run worker`. With MIGRATION_DATABASE_URL set, installs the
// job schema first. Refuses to start on migrations of this build not applied (`npm run migrate`), and
// on a DATABASE_URL marked pgbouncer=true (its locks need a real session).
// SIGTERM/SIGINT: no new chunks; running ones get SHUTDOWN_GRACE_SECONDS to finish (an unfinished one
// goes back to the queue for another worker); leadership is handed back; exit 0.
import { loadCheckpointKey, loadTrustedKeys } from '../lib/audit/checkpoint.ts';
import { startCheckpointSchedule } from '../lib/audit/checkpoint-schedule.ts';
import { startAuditVerificationSchedule } from '../lib/audit/verification-schedule.ts';
import { treeSignerFrom } from '../lib/audit/tree/config.ts';
import { signerDatabaseUrl, SIGNER_CONNECTION_MISSING } from '../lib/audit/signer-connection.ts';
import { startTreeSchedule } from '../lib/audit/tree/schedule.ts';
import { auditVerificationFigures } from '../lib/audit/verification.ts';
import { createDb, marksTransactionPooler, preparedStatementsFor, sqlPool } from '../lib/db/client.ts';
import { env } from '../lib/env.ts';
import { consoleBaseUrl } from '../lib/notifications/email-outbox.ts';
import { notificationEmailProvider, startNotificationSchedule } from '../lib/notifications/schedule.ts';
import { LEADER_LOCKS, startLeaderElection } from '../lib/ops/leader.ts';
import { routeConsoleToLog } from '../lib/ops/console-as-log.ts';
import { componentLogger } from '../lib/ops/log.ts';
import { startTracingFromEnv } from '../lib/ops/tracing.ts';
import { watchAuditVerification, watchPool } from '../lib/ops/metrics.ts';
import { watchReplays } from '../lib/ops/work-metrics.ts';
import { startWorkerHttp } from './support/worker-http.ts';
import { pendingMigrations, pendingMigrationsMessage } from '../lib/ops/preflight.ts';
import { providerRegistryFromEnv } from '../lib/providers/registry.ts';
import '../lib/providers/sandbox/register.ts'; // provider type sandbox
import { installJobEngine, jobEngineInstalled, startReplayWorker } from '../lib/replay/index.ts';
import { startRetentionSchedule } from '../lib/retention/schedule.ts';

// One JSON line per event (lib/ops/log.ts); the replay code's messages are the `msg`.
// pg-boss's, Prisma's and any library's console lines and warnings too (console-as-log.ts).
routeConsoleToLog('worker');
const logger = componentLogger('worker');
const log = (line: string) => logger.info(line);

async function main() {
  const e = env();
  const tracing = startTracingFromEnv('effect-ledger-worker'); // OTEL_EXPORTER_OTLP_ENDPOINT set: spans of chunks
  if (!e.DATABASE_URL) throw new Error('DATABASE_URL is not set (the app role connection)');
  // The leader lock and the chunk locks are session advisory locks: through a transaction-mode pooler
  // each statement may run on another server session, so two workers would both lead and a chunk's
  // lock would be held by nobody. Refused before anything connects.
  if (marksTransactionPooler(e.DATABASE_URL))
    throw new Error(
      "DATABASE_URL carries pgbouncer=true (a transaction-mode pooler), which cannot hold a worker's session advisory locks (its leadership and its replay chunks): give the worker a DATABASE_URL that reaches PostgreSQL directly or through a session-mode pool",
    );
  const pending = await pendingMigrations(preparedStatementsFor(e.DATABASE_URL).url);
  if (pending.length) throw new Error(pendingMigrationsMessage(pending));
  if (e.MIGRATION_DATABASE_URL) await installJobEngine(e.MIGRATION_DATABASE_URL);
  const db = createDb(e.DATABASE_URL, e.REPLAY_CONCURRENCY * 2 + 4);
  const providers = providerRegistryFromEnv();
  if (!(await jobEngineInstalled(preparedStatementsFor(e.DATABASE_URL).url)))
    throw new Error(
      "the replay job engine (pg-boss) is not installed in this database: run `npm run migrate` with MIGRATION_DATABASE_URL (the owner's URL), which installs it, or start this worker once with MIGRATION_DATABASE_URL set",
    );
  const leader = await startLeaderElection({
    connectionString: preparedStatementsFor(e.DATABASE_URL).url,
    lockKey: LEADER_LOCKS.replayMaintenance,
    log: (line) => log(`${line} (rescue, sweep, reconciler)`),
  });
  const worker = await startReplayWorker({
    appUrl: e.DATABASE_URL,
    db,
    providers,
    concurrency: e.REPLAY_CONCURRENCY,
    reconcileIntervalMs: e.RECONCILE_INTERVAL_SECONDS * 1000,
    leader,
    log,
  });
  // Signed audit checkpoints and tree heads, on the leader only, when a signing key is configured
  // (docs/AUDIT.md). They are stored through the signer's own connection: the app role may not.
  const signerUrl = signerDatabaseUrl(e);
  if (e.AUDIT_SIGNING_KEY && !signerUrl)
    log(`audit checkpoints and tree heads are not signed: ${SIGNER_CONNECTION_MISSING}`);
  const signerDb = e.AUDIT_SIGNING_KEY && signerUrl ? createDb(signerUrl, 2) : undefined;
  const checkpoints =
    e.AUDIT_SIGNING_KEY && signerDb
      ? startCheckpointSchedule({
          db: signerDb,
          key: loadCheckpointKey(e.AUDIT_SIGNING_KEY),
          trustedKeys: loadTrustedKeys(e.AUDIT_PREVIOUS_PUBLIC_KEYS),
          intervalMs: e.AUDIT_CHECKPOINT_INTERVAL_SECONDS * 1000,
          leader,
          log,
        })
      : undefined;
  // The audit tree (docs/AUDIT.md): the leader integrates new entries and signs the head that extends
  // the one it signed last; without a signer (or its state file) the tree is kept, not signed.
  const signer = treeSignerFrom(e);
  if ('missing' in signer) log(`audit tree heads are not signed: ${signer.missing}`);
  const tree = startTreeSchedule({
    db,
    signer: 'missing' in signer || !signerDb ? undefined : { config: signer, db: signerDb },
    sequenceMs: e.AUDIT_TREE_SEQUENCE_SECONDS * 1000,
    signMs: e.AUDIT_CHECKPOINT_INTERVAL_SECONDS * 1000,
    leader,
    log,
  });
  // A2: the leader verifies the audit trail in the background, from where the last pass stopped; the
  // audit page and /metrics read the stored result (lib/audit/verification.ts).
  const verification = startAuditVerificationSchedule({ db, leader, log });
  watchAuditVerification(() => auditVerificationFigures(db));
  watchPool(sqlPool(db));
  watchReplays(db, () => leader.isLeader());
  const http = e.WORKER_HTTP_PORT
    ? await startWorkerHttp(e.WORKER_HTTP_PORT, { heartbeat: leader.lastContact, token: e.METRICS_TOKEN, log })
    : undefined;
  // T1: the leader prunes retired runs, then old notifications, every RETENTION_INTERVAL_MINUTES
  // (lib/retention).
  const retention = startRetentionSchedule({
    db,
    isLeader: () => leader.isLeader(),
    intervalMs: e.RETENTION_INTERVAL_MINUTES * 60_000,
    log,
  });
  // Notifications: every worker sweeps expired requests and sends due emails (lib/notifications).
  const notifications = startNotificationSchedule({
    db,
    intervalMs: e.NOTIFY_EMAIL_INTERVAL_SECONDS * 1000,
    provider: notificationEmailProvider(providers, e.NOTIFY_EMAIL_PROVIDER),
    baseUrl: consoleBaseUrl(),
    log,
  });
  log(`worker ready: ${e.REPLAY_CONCURRENCY} chunk handlers, providers ${providers.names().join(', ') || '(none)'}`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log(`stopping: running chunks get ${e.SHUTDOWN_GRACE_SECONDS} s to finish`);
    try {
      http?.close();
      await worker.stop(e.SHUTDOWN_GRACE_SECONDS * 1000);
      await retention.stop();
      await notifications.stop();
      await checkpoints?.stop();
      await tree.stop();
      await signerDb?.$disconnect();
      await verification.stop();
      await leader.stop();
      await providers.close();
      await db.$disconnect();
      await tracing?.shutdown(); // exports the spans still buffered
      log('stopped');
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, `stopping failed: ${(error as Error).message}`);
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch((error) => {
  logger.fatal({ err: error }, error instanceof Error ? error.message : String(error));
  process.exit(1);
});
