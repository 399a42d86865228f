// Retention of notifications: an inbox row is worth keeping while its person may still act on it. A
// read notification is pruned once it is older than the read window; any notification, read or not,
// once it is older than the longer window (a request that waited that long has expired, a replay
// that ended that long ago is history: the audit trail keeps every decision either way). A pruned
// notification takes its email outbox row with it. The (kind, subject) rows of notification_event
// stay: they are one per event, not per person, and they are what keeps a hook that runs again from
// telling anyone twice, pruned notification or not. Each batch is one transaction with one audit entry.
import { appendAudit } from '@/lib/audit/append.ts';
import { Prisma, type Db } from '@/lib/db/client.ts';
import type { Actor } from '@/lib/core/actor.ts';

export interface NotificationRetention {
  /** Days after which a read notification is pruned. */
  readDays: number;
  /** Days after which any notification is pruned, read or not (at least readDays). */
  allDays: number;
  /** Notifications per transaction (and per audit entry). */
  batchRows: number;
}

export interface NotificationPruneReport {
  batches: number;
  /** Notifications pruned: read ones, unread ones, and the outbox rows that went with them. */
  read: number;
  unread: number;
  emails: number;
}

export interface NotificationPruneOptions {
  actor: Actor;
  policy: NotificationRetention;
  /** Evaluate the windows as of this time instead of the database's now. */
  asOf?: Date;
  onBatch?: (report: NotificationPruneReport) => void;
  /** Stops after this many batches (the scheduled job keeps each pass short). */
  maxBatches?: number;
}

export function validNotificationRetention(p: NotificationRetention): boolean {
  return p.readDays >= 1 && p.allDays >= p.readDays && p.batchRows >= 1;
}

/** One batch: the oldest prunable rows (SKIP LOCKED: two pruners never share a row), deleted with
 *  their outbox rows; returns what went. */
function pruneBatchSql(readCutoff: Prisma.Sql, allCutoff: Prisma.Sql, limit: number): Prisma.Sql {
  return Prisma.sql`
    WITH doomed AS (
      SELECT id, read_at IS NOT NULL AS was_read FROM notification
       WHERE created_at < ${readCutoff} AND (read_at IS NOT NULL OR created_at < ${allCutoff})
       ORDER BY created_at LIMIT ${limit}
       FOR UPDATE SKIP LOCKED),
    emails AS (DELETE FROM notification_email e USING doomed d WHERE e.notification_id = d.id RETURNING 1),
    gone AS (DELETE FROM notification n USING doomed d WHERE n.id = d.id RETURNING d.was_read)
    SELECT (SELECT count(*) FROM gone WHERE was_read)::int AS read,
           (SELECT count(*) FROM gone WHERE NOT was_read)::int AS unread,
           (SELECT count(*) FROM emails)::int AS emails`;
}

/** Prunes old notifications, batch by batch; returns what was pruned. */
export async function pruneNotifications(db: Db, options: NotificationPruneOptions): Promise<NotificationPruneReport> {
  const { policy, actor } = options;
  if (!validNotificationRetention(policy)) throw new Error('invalid notification retention policy');
  const asOf = options.asOf ? Prisma.sql`${options.asOf}::timestamptz` : Prisma.sql`now()`;
  const readCutoff = Prisma.sql`(${asOf} - make_interval(days => ${policy.readDays}))`;
  const allCutoff = Prisma.sql`(${asOf} - make_interval(days => ${policy.allDays}))`;
  const report: NotificationPruneReport = { batches: 0, read: 0, unread: 0, emails: 0 };
  while (options.maxBatches === undefined || report.batches < options.maxBatches) {
    const counts = await db.$transaction(async (tx) => {
      const [pruned] = await tx.$queryRaw<{ read: number; unread: number; emails: number }[]>(
        pruneBatchSql(readCutoff, allCutoff, policy.batchRows),
      );
      if (!pruned || pruned.read + pruned.unread === 0) return null;
      await appendAudit(tx, {
        chain: 'retention',
        actor,
        action: 'retention.prune',
        subjectType: 'retention',
        subjectId: 'notifications',
        detail: { ...pruned, readDays: policy.readDays, allDays: policy.allDays },
      });
      return pruned;
    });
    if (!counts) break;
    report.batches += 1;
    report.read += counts.read;
    report.unread += counts.unread;
    report.emails += counts.emails;
    options.onBatch?.({ ...report });
  }
  return report;
}
