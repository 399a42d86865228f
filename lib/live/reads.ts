// The two cheap reads behind the change feed, each one indexed statement that needs no session state
// (no LISTEN, no advisory lock, no prepared statement name), so they work through a transaction-mode
// pooler like every other read:
// - the audit trail past a watermark: every state change writes its audit entry in the same
//   transaction (A1), so new entries are exactly the changes (served by the primary key);
// - the counters of replays that are not finished yet (a handful of rows), because a replay's
//   progress moves counters that are not audited one by one.
import { sqlRows, type Db } from '@/lib/db/client.ts';
import { topicsOfAudit, type LiveTopic } from '@/lib/live/change.ts';

export interface AuditChange {
  id: bigint;
  runId: string | null;
  workflow: string | null;
  topics: LiveTopic[];
}

/** The newest audit entry id: where a feed starts (it reports changes from then on, not history). */
export async function auditWatermark(database: Db): Promise<bigint> {
  const rows = await sqlRows<{ id: string | null }>(database, 'SELECT max(id)::text AS id FROM audit_entry', []);
  return BigInt(rows[0]?.id ?? '0');
}

/**
 * Entries with an id above `after`, plus the listed ids: ids below the watermark that were not seen
 * yet, because a transaction that took its id earlier may commit later than one that took a higher id.
 */
export async function auditChangesSince(
  database: Db,
  after: bigint,
  missing: readonly bigint[],
  limit: number,
): Promise<AuditChange[]> {
  const rows = await sqlRows<{
    id: string;
    run_id: string | null;
    workflow: string | null;
    action: string;
    outcome: string;
    before_state: string | null;
    after_state: string | null;
  }>(
    database,
    // Two index lookups on the primary key (an OR of the two would scan the whole trail).
    `SELECT a.id::text, a.run_id, r.workflow, a.action, a.outcome, a.before_state, a.after_state
       FROM (
         (SELECT * FROM audit_entry WHERE id = ANY($2::bigint[]))
         UNION ALL
         (SELECT * FROM audit_entry WHERE id > $1::bigint ORDER BY id LIMIT $3)
       ) a LEFT JOIN run r ON r.id = a.run_id
      ORDER BY a.id`,
    [after.toString(), missing.map(String), limit],
  );
  return rows.map((r) => ({
    id: BigInt(r.id),
    runId: r.run_id,
    workflow: r.workflow,
    topics: topicsOfAudit({
      action: r.action,
      outcome: r.outcome,
      beforeState: r.before_state,
      afterState: r.after_state,
    }),
  }));
}

export interface ReplayFingerprint {
  replayId: string;
  runId: string;
  workflow: string | null;
  /** Status and counters: when this string changes, the replay's progress moved. */
  print: string;
}

const FINISHED = ['completed', 'cancelled', 'rejected', 'expired'];

/** Replays still in progress, plus the listed ones (those in progress last time, to see them finish). */
export async function replayFingerprints(database: Db, alsoIds: readonly string[]): Promise<ReplayFingerprint[]> {
  const rows = await sqlRows<{
    id: string;
    run_id: string;
    workflow: string | null;
    status: string;
    sent: number;
    skipped: number;
    failed: number;
    unknown: number;
  }>(
    database,
    `SELECT p.id::text, p.run_id::text, r.workflow, p.status, p.sent, p.skipped, p.failed, p.unknown
       FROM replay p LEFT JOIN run r ON r.id = p.run_id
      WHERE p.status <> ALL($1::text[]) OR p.id = ANY($2::uuid[])`,
    [FINISHED, alsoIds],
  );
  return rows.map((r) => ({
    replayId: r.id,
    runId: r.run_id,
    workflow: r.workflow,
    print: `${r.status}:${r.sent}:${r.skipped}:${r.failed}:${r.unknown}`,
  }));
}

export function isFinishedReplay(print: string): boolean {
  return FINISHED.includes(print.slice(0, print.indexOf(':')));
}
