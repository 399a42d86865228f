// The job engine: pg-boss 10 on the same PostgreSQL. A replay is split into chunk jobs (a range of
// replay_item ids), so several worker processes share one replay and a crash loses at most the
// chunk in hand, which another worker picks up. pg-boss may run a handler twice; every send still
// claims through the ledger (F3), so a second run finds its targets taken and sends nothing.
//
// Installing pg-boss's schema and creating its queues needs the database owner (queues are table
// partitions); the app role then gets DML only, like on the ledger's own tables (A3).
import PgBoss from 'pg-boss';
import pg from 'pg';
import { APP_GROUP_ROLE } from '../db/roles.ts';
import type { DbOrTx } from '../db/client.ts';
import { componentLogger } from '../ops/log.ts';

export const JOB_SCHEMA = 'pgboss';
export const REPLAY_QUEUE = 'replay-chunk';
/** Items per chunk job. Small enough that a replay is many more chunks than handlers (4 processes x 4
 *  handlers = 16): with 500, 10,000 targets were 20 chunks, so after the first 16 the last 4 ran with
 *  12 handlers idle, and the run took two chunk-times where one and a quarter would do. One window
 *  of the executor (128) still covers a chunk in one read. */
export const CHUNK_SIZE = 100;

/** Retried on failure (a provider that refuses connections, a database restart) with a short delay;
 *  a worker killed mid-chunk is detected by its released advisory lock (see rescue.ts). */
export const CHUNK_JOB_OPTIONS = {
  retryLimit: 10_000,
  retryDelay: 2,
  retryBackoff: false,
  expireInSeconds: 900,
} as const;

export interface ReplayChunk {
  replayId: string;
  fromId: string;
  toId: string;
}

/** Whether installJobEngine has run on this database (its schema and the replay queue exist). */
export async function jobEngineInstalled(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const found = await client.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [`${JOB_SCHEMA}.queue`]);
    if (!found.rows[0]!.t) return false;
    const queue = await client.query(`SELECT 1 FROM ${client.escapeIdentifier(JOB_SCHEMA)}.queue WHERE name = $1`, [
      REPLAY_QUEUE,
    ]);
    return (queue.rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}

/** Creates the job schema and queues as the owner and grants the app role what it needs. Idempotent. */
export async function installJobEngine(ownerUrl: string): Promise<void> {
  const boss = new PgBoss({
    connectionString: ownerUrl,
    schema: JOB_SCHEMA,
    migrate: true,
    supervise: false,
    schedule: false,
    max: 2,
  });
  boss.on('error', () => undefined);
  await boss.start();
  try {
    if (!(await boss.getQueue(REPLAY_QUEUE))) {
      await boss.createQueue(REPLAY_QUEUE, { name: REPLAY_QUEUE, policy: 'standard', ...CHUNK_JOB_OPTIONS });
    }
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    await client.query(`GRANT USAGE ON SCHEMA ${JOB_SCHEMA} TO ${APP_GROUP_ROLE}`);
    await client.query(
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${JOB_SCHEMA} TO ${APP_GROUP_ROLE}`,
    );
    await client.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${JOB_SCHEMA} TO ${APP_GROUP_ROLE}`);
    await client.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${JOB_SCHEMA} TO ${APP_GROUP_ROLE}`);
  } finally {
    await client.end();
  }
}

/** A pg-boss instance on the app role's connection. `work` also runs maintenance (expiry, archive). */
export async function startBoss(appUrl: string, options: { work?: boolean; max?: number } = {}): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: appUrl,
    schema: JOB_SCHEMA,
    migrate: false,
    supervise: options.work ?? false,
    schedule: false,
    max: options.max ?? 4,
    maintenanceIntervalSeconds: 30,
    application_name: options.work ? 'replay-worker' : 'replay-sender',
  });
  boss.on('error', (error) => componentLogger('pg-boss').error({ err: error }, error.message));
  await boss.start();
  return boss;
}

/** Only what the console side needs from the engine: sending chunk jobs. */
export interface JobSender {
  insert(jobs: PgBoss.JobInsert[]): Promise<void>;
}

let shared: Promise<PgBoss> | undefined;
/** One sender per process, on DATABASE_URL (the console's process). A start that fails (the database
 *  down for a moment) is forgotten, so the next replay tries again instead of getting that error forever. */
export function sharedJobSender(appUrl: string): Promise<JobSender> {
  shared ??= startBoss(appUrl).catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  return shared;
}

/** Splits the items still without an outcome into chunk jobs and queues them. */
export async function enqueueRemaining(db: DbOrTx, jobs: JobSender, replayId: string): Promise<number> {
  const ranges = await db.$queryRaw<{ from_id: bigint; to_id: bigint }[]>`
    SELECT min(id) AS from_id, max(id) AS to_id
      FROM (SELECT id, (row_number() OVER (ORDER BY id) - 1) / ${CHUNK_SIZE}::int AS g
              FROM replay_item WHERE replay_id = ${replayId}::uuid AND outcome IS NULL) s
     GROUP BY g ORDER BY 1`;
  if (ranges.length === 0) return 0;
  for (let i = 0; i < ranges.length; i += 500) {
    await jobs.insert(
      ranges.slice(i, i + 500).map((r) => ({
        name: REPLAY_QUEUE,
        data: { replayId, fromId: String(r.from_id), toId: String(r.to_id) } satisfies ReplayChunk,
        ...CHUNK_JOB_OPTIONS,
      })),
    );
  }
  return ranges.length;
}

/** Chunk jobs of a replay that are queued, waiting for a retry, or running. */
export async function openChunkJobs(db: DbOrTx, replayId: string): Promise<number> {
  const rows = await db.$queryRawUnsafe<{ n: bigint }[]>(
    `SELECT count(*) AS n FROM ${JOB_SCHEMA}.job WHERE name = $1 AND state IN ('created', 'retry', 'active') AND data->>'replayId' = $2`,
    REPLAY_QUEUE,
    replayId,
  );
  return Number(rows[0]?.n ?? 0);
}
