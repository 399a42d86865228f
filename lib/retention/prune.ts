// Retention (T1): the bulky, short-lived data of retired runs is pruned; the ledger itself is not.
// A run is retired when its event closed, or (no event is closed) it went quiet, more than the
// replay window ago, with no key in pending, unknown or stuck and no replay still open. For a retired
// run this removes: idempotency records whose stored answer names the run or one of its keys (Z5
// retries are long over; every operation behind the API is safe to repeat anyway), the raw provider
// responses of its attempts (status and timestamps stay) and the items of its finished replays (the
// replay row keeps its counters). Keys, epochs, effects, transitions, plans and the audit trail are
// never pruned: a key does not expire, so a replay of its old intent still refuses to send twice.
// Each batch of runs is one transaction with one audit entry carrying its counts.
import { appendAudit } from '@/lib/audit/append.ts';
import { Prisma, type Db } from '@/lib/db/client.ts';
import type { Actor } from '@/lib/core/actor.ts';

/** States whose data someone still needs: a process or a person has not finished with the key. */
export const RETAINED_KEY_STATES = ['pending', 'unknown', 'stuck'] as const;

export interface RetentionPolicy {
  /** Days after a run's event closed, or the run's last activity, before it is pruned. */
  windowDays: number;
  /** Runs per transaction (and per audit entry). */
  batchRuns: number;
}

export interface PruneCounts {
  runs: number;
  idempotencyRecords: number;
  rawResponses: number;
  replayItems: number;
}

export interface PruneReport extends PruneCounts {
  batches: number;
}

export interface PruneOptions {
  actor: Actor;
  policy: RetentionPolicy;
  /** Evaluate the window as of this time instead of the database's now (tests, dry reasoning). */
  asOf?: Date;
  /** Called after each committed batch with the running totals. */
  onBatch?: (report: PruneReport) => void;
  /** Stops after this many batches (the scheduled job keeps each pass short). */
  maxBatches?: number;
}

const RETAINED = Prisma.raw(RETAINED_KEY_STATES.map((s) => `'${s}'`).join(', '));
const FINISHED_REPLAY = Prisma.raw(`'completed', 'cancelled', 'rejected', 'expired'`);

/** Locks up to `limit` retired, not yet pruned runs (SKIP LOCKED: two pruners never share a run). */
function retiredRunsSql(cutoff: Prisma.Sql, limit: number): Prisma.Sql {
  return Prisma.sql`
    SELECT r.id::text AS id FROM run r JOIN event e ON e.id = r.event_id
     WHERE r.pruned_at IS NULL AND r.status <> 'replaying'
       -- Quiet since the later of the event's closing and the run's last activity (greatest skips
       -- nulls): a run replayed long after its event closed is not retired minutes after its replay.
       AND greatest(e.closed_at, r.updated_at,
             (SELECT max(k.changed_at) FROM effect_key k WHERE k.run_id = r.id),
             (SELECT max(coalesce(p.finished_at, p.created_at)) FROM replay p WHERE p.run_id = r.id)) < ${cutoff}
       -- Nothing of the run still in doubt: keys it first claimed, and epochs it holds (a later run of
       -- the same event that claimed a key again). effect has no index on run_id (one fewer per
       -- claim); the epochs in doubt are found through its (state, lease) index instead.
       AND NOT EXISTS (SELECT 1 FROM effect_key k WHERE k.run_id = r.id AND k.state::text IN (${RETAINED}))
       AND NOT EXISTS (SELECT 1 FROM effect ef WHERE ef.state IN (${RETAINED}) AND ef.run_id = r.id)
       AND NOT EXISTS (SELECT 1 FROM replay p WHERE p.run_id = r.id AND p.status NOT IN (${FINISHED_REPLAY}))
     ORDER BY r.updated_at, r.id LIMIT ${limit}
     FOR UPDATE OF r SKIP LOCKED`;
}

async function pruneBatch(tx: Prisma.TransactionClient, runIds: string[]): Promise<Omit<PruneCounts, 'runs'>> {
  const ids = Prisma.sql`${runIds}::uuid[]`;
  // A key of a retired run may have been claimed again by a later run (a bump): its attempts are
  // checked against the key's current state, not only the run's.
  const rawResponses = await tx.$executeRaw(Prisma.sql`
    UPDATE attempt a SET response_headers = NULL, response_body = NULL
      FROM effect_key k
     WHERE a.run_id = ANY(${ids}) AND k.key = a.key AND k.state::text NOT IN (${RETAINED})
       AND (a.response_body IS NOT NULL OR a.response_headers IS NOT NULL)`);
  const replayItems = await tx.$executeRaw(Prisma.sql`
    DELETE FROM replay_item i USING replay p, effect_key k
     WHERE p.run_id = ANY(${ids}) AND p.status IN (${FINISHED_REPLAY}) AND i.replay_id = p.id
       AND k.key = i.key AND k.state::text NOT IN (${RETAINED})`);
  // Only completed records (a running request's record is what makes its duplicate wait, Z5).
  const idempotencyRecords = await tx.$executeRaw(Prisma.sql`
    DELETE FROM idempotency_record
     WHERE response_status IS NOT NULL
       AND (response_body->>'runId' = ANY(${runIds}::text[])
            OR response_body->>'key' IN (SELECT k.key FROM effect_key k
                                          WHERE k.run_id = ANY(${ids}) AND k.state::text NOT IN (${RETAINED})))`);
  await tx.$executeRaw(Prisma.sql`UPDATE run SET pruned_at = now() WHERE id = ANY(${ids})`);
  return { idempotencyRecords, rawResponses, replayItems };
}

/** Prunes every retired run, batch by batch; returns what was pruned. */
export async function pruneRetiredRuns(db: Db, options: PruneOptions): Promise<PruneReport> {
  const { policy, actor } = options;
  if (!(policy.windowDays >= 0) || !(policy.batchRuns >= 1)) throw new Error('invalid retention policy');
  const asOf = options.asOf ? Prisma.sql`${options.asOf}::timestamptz` : Prisma.sql`now()`;
  const cutoff = Prisma.sql`(${asOf} - make_interval(days => ${policy.windowDays}))`;
  const report: PruneReport = { batches: 0, runs: 0, idempotencyRecords: 0, rawResponses: 0, replayItems: 0 };
  while (options.maxBatches === undefined || report.batches < options.maxBatches) {
    const counts = await db.$transaction(async (tx) => {
      const runs = await tx.$queryRaw<{ id: string }[]>(retiredRunsSql(cutoff, policy.batchRuns));
      if (runs.length === 0) return null;
      const runIds = runs.map((r) => r.id);
      const pruned = { runs: runIds.length, ...(await pruneBatch(tx, runIds)) };
      await appendAudit(tx, {
        chain: 'retention',
        actor,
        action: 'retention.prune',
        subjectType: 'retention',
        subjectId: 'runs',
        detail: { ...pruned, windowDays: policy.windowDays, firstRunId: runIds[0], lastRunId: runIds.at(-1) },
      });
      return pruned;
    });
    if (!counts) break;
    report.batches += 1;
    report.runs += counts.runs;
    report.idempotencyRecords += counts.idempotencyRecords;
    report.rawResponses += counts.rawResponses;
    report.replayItems += counts.replayItems;
    options.onBatch?.({ ...report });
  }
  return report;
}
