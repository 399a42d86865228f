// Z8 for four-eyes requests (epoch bumps and forced replays): the decision carries the request's
// status as the person saw it. A request another operator decided, or one that expired, meanwhile is
// a stale decision: nothing is written and the answer names the new status, who decided and when.
import { z } from 'zod';
import type { DbOrTx } from '../db/client.ts';
import { StaleDecision } from '../ledger/seen.ts';

export const APPROVAL_STATUSES = ['open', 'approved', 'rejected', 'expired', 'cancelled'] as const;

/** The status of the request the page showed (the card offers decisions on open requests only). */
export const seenStatusField = z.enum(APPROVAL_STATUSES);

/** Throws StaleDecision when the request is no longer in the status the person saw. */
export async function refuseUnlessSeenStatus(db: DbOrTx, requestId: string, seen: string | undefined): Promise<void> {
  if (seen === undefined) return;
  const now = await db.approvalRequest.findUnique({
    where: { id: requestId },
    select: { status: true, setHash: true, decidedById: true, decidedAt: true },
  });
  if (!now || now.status === seen) return;
  const decider = now.decidedById
    ? await db.user.findUnique({ where: { id: now.decidedById }, select: { email: true } })
    : null;
  throw new StaleDecision({
    subjectType: 'approval',
    subjectId: requestId,
    was: { state: seen },
    now: { state: now.status, hash: now.setHash },
    changedBy: decider?.email ?? (now.status === 'expired' ? 'expiry' : null),
    changedAt: now.decidedAt?.toISOString() ?? null,
    // A decided request takes no second decision: nothing to decide again on.
    retry: {},
  });
}
