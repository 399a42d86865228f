// Completes a running replay whose items all have an outcome. The counters are recounted from the
// items here (handlers add to them in batches; a crash may have lost a batch).
import { appendAudit } from '../audit/append.ts';
import { Prisma, sqlRows, type Db } from '../db/client.ts';
import type { Actor } from '../ledger/index.ts';
import { exactlyOnce } from './set.ts';
import { notifyReplayEnded } from '@/lib/notifications/events.ts';

/** A replay's counters counted from its items (the select list; FROM replay_item follows). */
export const ITEM_COUNTS = `SELECT count(*) FILTER (WHERE outcome = 'sent')::int AS sent,
  count(*) FILTER (WHERE outcome = 'skipped')::int AS skipped, count(*) FILTER (WHERE outcome = 'failed')::int AS failed,
  count(*) FILTER (WHERE outcome IN ('unknown', 'interrupted'))::int AS unknown, count(*) FILTER (WHERE outcome IS NULL) AS open`;

/** Sets a completed replay's counters to the count of its items again ($1: the replay). */
export const RECOUNT_COMPLETED_SQL = `
  UPDATE replay r SET sent = c.sent, skipped = c.skipped, failed = c.failed, unknown = c.unknown
    FROM (${ITEM_COUNTS} FROM replay_item WHERE replay_id = $1::uuid) c
   WHERE r.id = $1::uuid AND r.status = 'completed'`;

export async function completeIfDone(db: Db, replayId: string, runId: string, actor: Actor): Promise<boolean> {
  const [open] = await sqlRows<{ open: boolean }>(
    db,
    `SELECT EXISTS (SELECT 1 FROM replay_item WHERE replay_id = $1::uuid AND outcome IS NULL) AS open, (SELECT status FROM replay WHERE id = $1::uuid) AS status`,
    [replayId],
  );
  if (!open || open.open) return false;
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: string }[]>(Prisma.sql`
      UPDATE replay r SET status = 'completed', finished_at = now(), sent = c.sent, skipped = c.skipped, failed = c.failed, unknown = c.unknown
        FROM (${Prisma.raw(ITEM_COUNTS)} FROM replay_item WHERE replay_id = ${replayId}::uuid) c
       WHERE r.id = ${replayId}::uuid AND r.status = 'running' AND c.open = 0 RETURNING r.id`);
    if (rows.length === 0) return false;
    const r = await tx.replay.findUniqueOrThrow({ where: { id: replayId } });
    await appendAudit(tx, {
      chain: `run:${runId}`,
      actor,
      action: 'replay.complete',
      subjectType: 'replay',
      subjectId: replayId,
      runId,
      before: 'running',
      after: 'completed',
      detail: {
        sent: r.sent,
        skipped: r.skipped,
        failed: r.failed,
        unknown: r.unknown,
        total: r.total,
        exactlyOnceAfter: await exactlyOnce(tx, runId),
      },
    });
    await notifyReplayEnded(tx, replayId);
    return true;
  });
}
