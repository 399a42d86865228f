// Executes the bumps of a set, one key at a time (E2): each bump re-checks its key's epoch (and, for a
// direct bump, the version the person saw, Z8), so a key that moved in between is reported as failed
// instead of bumped; the others go ahead.
import type { Db } from '../db/client.ts';
import { bumpEpoch, LedgerError, type Actor, type RequestMeta } from '../ledger/index.ts';
import { decideOnSeenEffect, StaleDecision, type SeenEffect } from '../ledger/seen.ts';
import type { BumpItem } from './bump-preview.ts';

/** Who asks for or decides a bump, and through which connection. */
export interface BumpContext {
  db: Db;
  actor: Actor;
  request?: RequestMeta;
}

export async function executeBumps(
  ctx: BumpContext,
  items: readonly BumpItem[],
  why: string,
  approvalRequestId?: string,
  seen?: Record<string, SeenEffect>,
) {
  let bumped = 0;
  const failed: { key: string; error: string }[] = [];
  for (const item of items) {
    try {
      await decideOnSeenEffect(ctx.db, item.key, seen?.[item.key], (db) =>
        bumpEpoch(
          { ...ctx, db },
          {
            key: item.key,
            expectedEpoch: item.epoch,
            reason: why,
            ...(approvalRequestId ? { approvalRequestId } : {}),
          },
        ),
      );
      bumped++;
    } catch (error) {
      if (!(error instanceof LedgerError)) throw error;
      if (error instanceof StaleDecision && items.length === 1) throw error;
      failed.push({ key: item.key, error: error.message });
    }
  }
  return { bumped, failed };
}
