// An approved four-eyes bump runs its bumps after the approval commits, each key in its own
// transaction (E2), so a crash in between would leave the request approved and its keys as they were,
// with nothing left to run them. A request is marked executed once its bumps ran; the worker's leader
// runs the bumps of an approved request still unmarked well after its decision, as its approver. Each
// bump re-checks its key's epoch, so a key bumped before the crash is reported, never bumped twice.
import type { Db } from '../db/client.ts';
import type { BumpItem } from './bump-preview.ts';
import { executeBumps, type BumpContext } from './execute-bumps.ts';

/** Long enough that the approver's own run of a 10,000-key set has finished, unless it died. */
const RESUME_AFTER_SECONDS = 600;

/** Runs an approved request's bumps and marks it executed. */
export async function runApprovedBumps(
  ctx: BumpContext,
  request: { id: string; reason: string; items: readonly BumpItem[] },
  note = 'four-eyes approved',
) {
  const result = await executeBumps(ctx, request.items, `${request.reason} (${note})`, request.id);
  await ctx.db.approvalRequest.updateMany({
    where: { id: request.id, executedAt: null },
    data: { executedAt: new Date() },
  });
  return result;
}

/** Resumes approved requests whose bumps were interrupted; returns how many it ran. */
export async function resumeApprovedBumps(db: Db, limit = 20): Promise<number> {
  const due = await db.$queryRaw<{ id: string; reason: string; payload: unknown; decided_by_id: string | null }[]>`
    SELECT id, reason, payload, decided_by_id FROM approval_request
     WHERE kind = 'effect.bump' AND status = 'approved' AND executed_at IS NULL
       AND decided_at < now() - make_interval(secs => ${RESUME_AFTER_SECONDS}::int)
     ORDER BY decided_at LIMIT ${limit}`;
  for (const r of due) {
    const approver = r.decided_by_id
      ? await db.user.findUnique({ where: { id: r.decided_by_id }, select: { id: true, email: true } })
      : null;
    const actor = {
      kind: 'user' as const,
      id: approver?.id ?? r.decided_by_id ?? 'unknown',
      label: approver?.email ?? 'the approver',
      role: 'operator' as const,
    };
    const items = ((r.payload as { items?: BumpItem[] } | null)?.items ?? []).filter(
      (i) => typeof i?.key === 'string' && Number.isInteger(i?.epoch),
    );
    await runApprovedBumps({ db, actor }, { id: r.id, reason: r.reason, items }, 'four-eyes approved, resumed');
  }
  return due.length;
}
