// The worker's lock connections and its chunk locks. The leader's and the chunk locks' sessions ask the
// server to notice a lost machine within seconds (else its locks stay for the server's 2 h keepalive).
// A chunk job handed out again while a live handler still runs it is failed for a retry, not returned
// (pg-boss would mark it completed without running it); and a second handler of the same process does
// not run it beside the first, although pg_try_advisory_lock is re-entrant on their shared session.
// Real worker code in process, the real sandbox provider, a real database.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLeaderElection } from '@/lib/ops/leader.ts';
import { ProviderRegistry } from '@/lib/providers/registry.ts';
import { startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import '@/lib/providers/sandbox/register.ts';
import {
  getReplayProgress,
  installJobEngine,
  requestReplay,
  startBoss,
  startReplay,
  startReplayWorker,
  type ReplayWorker,
} from '@/lib/replay/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { JOB_SCHEMA } from '@/lib/replay/jobs.ts';
import { userActor } from '../helpers/factories.ts';
import { makeCampaign, until } from './replay-fixtures.ts';

const CHUNK_LOCK_CLASS = 20583; // lib/replay/worker.ts
const KEEPALIVE = ['tcp_keepalives_idle', 'tcp_keepalives_interval', 'tcp_keepalives_count', 'tcp_user_timeout'];

let t: TestDatabase;
let sandbox: Sandbox;
let sender: PgBoss;
let worker: ReplayWorker | undefined;
const lines: string[] = [];
const connects = vi.spyOn(pg.Client.prototype, 'connect');

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 20 });
  await installJobEngine(t.ownerUrl);
  sandbox = await startSandbox();
  sender = await startBoss(t.appUrl);
  worker = await startReplayWorker({
    appUrl: t.appUrl,
    db: t.db,
    providers: new ProviderRegistry({ sandbox: { type: 'sandbox', url: sandbox.url } }),
    concurrency: 2,
    reconcileIntervalMs: 600_000,
    log: (line) => lines.push(line),
  });
});
afterAll(async () => {
  connects.mockRestore();
  await worker?.stop();
  await sender?.stop({ graceful: false });
  await sandbox?.stop();
});

/** The clients this process connected under an application name. */
const clientsNamed = (name: string) =>
  connects.mock.contexts.filter(
    (c): c is pg.Client =>
      (c as { connectionParameters?: { application_name?: string } }).connectionParameters?.application_name === name,
  );

async function keepalive(client: pg.Client): Promise<Record<string, string>> {
  const r = await client.query<{ name: string; setting: string }>(
    'SELECT name, setting FROM pg_settings WHERE name = ANY($1) ORDER BY name',
    [KEEPALIVE],
  );
  return Object.fromEntries(r.rows.map((row) => [row.name, row.setting]));
}

const EXPECTED = {
  tcp_keepalives_count: '3',
  tcp_keepalives_idle: '5',
  tcp_keepalives_interval: '2',
  tcp_user_timeout: '10000',
};

/** A one-target replay whose chunk job gets the id we choose; `hold` runs before the job is queued. */
async function oneTargetReplay(hold: (replayId: string, jobId: string) => Promise<void>) {
  const operator = userActor('operator');
  const c = await makeCampaign(t.db, { not_sent: 1 }, { provider: 'sandbox', fourEyesReplay: false });
  const r = await requestReplay({ db: t.db, actor: operator }, { runId: c.runId, confirmCount: 1, reason: 'locks' });
  const jobId = randomUUID();
  const queued: PgBoss.JobInsert[] = [];
  await startReplay(
    { db: t.db, actor: operator, jobs: { insert: async (jobs) => void queued.push(...jobs) } },
    { replayId: r.replayId },
  );
  expect(queued).toHaveLength(1);
  await hold(r.replayId, jobId);
  await sender.insert(queued.map((job) => ({ ...job, id: jobId })));
  return { replayId: r.replayId, jobId, target: c.targets[0]!.target };
}

const jobRow = async (id: string) =>
  (
    await t.owner<{ state: string; retry_count: number }>(
      `SELECT state, retry_count FROM ${JOB_SCHEMA}.job WHERE id = $1`,
      [id],
    )
  ).rows[0];

const completed = (replayId: string) =>
  until(
    'the replay to complete',
    async () => (await getReplayProgress({ db: t.db }, { replayId })).status === 'completed',
    45_000,
  );

describe('worker lock sessions and chunk locks', () => {
  it('the leader connection and the chunk lock connection keep the server probing: a lost worker frees its locks in seconds', async () => {
    const leader = await startLeaderElection({ connectionString: t.appUrl, lockKey: 9_301, intervalMs: 600_000 });
    try {
      const [client] = clientsNamed('ledger-leader');
      expect(client).toBeDefined();
      expect(await keepalive(client!)).toEqual(EXPECTED);
    } finally {
      await leader.stop();
    }
    // Opened at start and idle: no chunk is queued yet, so nothing else runs on it now.
    const [locks] = clientsNamed('replay-worker-locks');
    expect(locks).toBeDefined();
    expect(await keepalive(locks!)).toEqual(EXPECTED);
  });

  it('a chunk whose lock another session holds is failed for a retry, not completed, and runs once the lock is free', async () => {
    const holder = new pg.Client({ connectionString: t.appUrl });
    await holder.connect();
    try {
      const { replayId, jobId, target } = await oneTargetReplay(async (_replay, id) => {
        await holder.query('SELECT pg_advisory_lock($1, hashtext($2))', [CHUNK_LOCK_CLASS, id]);
      });
      const row = await until(
        'the worker to take the job and give it back',
        async () => {
          const r = await jobRow(jobId);
          return r && (r.retry_count > 0 || r.state === 'completed') ? r : undefined;
        },
        30_000,
      );
      expect(row.state).not.toBe('completed');
      expect(lines).toContain(
        `chunk job ${jobId} is still held by a live handler; not running it twice, retried later`,
      );
      expect(sandbox.deliveriesTo(target)).toHaveLength(0);

      await holder.query('SELECT pg_advisory_unlock($1, hashtext($2))', [CHUNK_LOCK_CLASS, jobId]);
      await completed(replayId);
      expect(sandbox.deliveriesTo(target)).toHaveLength(1);
    } finally {
      await holder.end();
    }
  });

  it('a chunk handed out again to a second handler of the same process is not run beside the first', async () => {
    // The first handler is kept inside its chunk: its counters wait for the replay row this test locks.
    const blocker = new pg.Client({ connectionString: t.appUrl });
    await blocker.connect();
    let open = false;
    try {
      const { replayId, jobId, target } = await oneTargetReplay(async (id) => {
        await blocker.query('BEGIN');
        open = true;
        await blocker.query('SELECT 1 FROM replay WHERE id = $1::uuid FOR UPDATE', [id]);
      });
      await until('the first handler to wait inside its chunk', async () => {
        const r = await t.owner<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return r.rows[0]!.n > 0 && (await jobRow(jobId))?.state === 'active';
      });
      // What pg-boss does to a job past its expiry while its handler still runs: hands it out again.
      await t.owner(`UPDATE ${JOB_SCHEMA}.job SET state = 'retry', start_after = now() WHERE id = $1`, [jobId]);
      const refused = `chunk job ${jobId} is still held by a live handler; not running it twice, retried later`;
      await until('the second delivery to be refused', async () => lines.includes(refused), 30_000);

      await blocker.query('COMMIT');
      open = false;
      await completed(replayId);
      expect(sandbox.deliveriesTo(target)).toHaveLength(1);
      expect(lines.filter((l) => l.includes(`of ${replayId}: 1 processed`))).toHaveLength(1);
    } finally {
      if (open) await blocker.query('COMMIT');
      await blocker.end();
    }
  });
});
