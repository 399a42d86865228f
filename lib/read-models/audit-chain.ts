// The audit chain's verification as the audit page shows it (A2), within the viewer's scope (Z1).
import { readAuditVerification, verificationAgeSeconds } from '../audit/verification.ts';
import type { Db } from '../db/client.ts';
import { Prisma } from '../db/client.ts';
import { runInScopeSql, type WorkflowScope } from '@/lib/auth/grants.ts';

/** A stored verification older than this is shown as stale: the background job (every 10 s on the
 *  leader worker) has not run for a while, so no worker may be running. */
export const VERIFICATION_STALE_SECONDS = 300;

/** Where a broken chain breaks, as the background pass stored it. */
export interface ChainBreak {
  /** null: the chain's last entry is missing (its head names an entry that is gone). */
  entryId: string | null;
  chain: string;
  seq: number;
  problem: string;
}

/** The chain verification as one viewer may see it. Verification covers the whole trail, so its
 *  status and age are shown to everyone who reads the trail; the figures that count or locate entries
 *  (the verified entry id, which is a count of the whole trail, and where a break is) only to a viewer
 *  who may see those entries (Z1). */
export type ChainVerificationView =
  | { state: 'unverified'; ageSeconds: null; stale: false }
  | {
      state: 'ok';
      checkedAt: Date;
      ageSeconds: number;
      stale: boolean;
      /** The last verified entry id; null for a viewer scoped to some workflows. */
      upToId: string | null;
    }
  | {
      state: 'broken';
      checkedAt: Date;
      ageSeconds: number;
      stale: boolean;
      /** null when the broken entry is one the viewer may not see (or is missing and they are scoped). */
      at: ChainBreak | null;
    };

/** The chain verification shown on the audit page (A2): the background job's stored result and its
 *  age (lib/audit/verification.ts), one primary-key read whatever the trail's size; for a scoped
 *  viewer of a broken trail, one more primary-key read tells whether the broken entry is theirs. */
export async function chainVerification(
  db: Db,
  scope: WorkflowScope,
  now = new Date(),
): Promise<ChainVerificationView> {
  const v = await readAuditVerification(db);
  if (v.state === 'unverified') return { state: 'unverified', ageSeconds: null, stale: false };
  const ageSeconds = verificationAgeSeconds(v, now) ?? 0;
  const seen = { checkedAt: v.checkedAt, ageSeconds, stale: ageSeconds > VERIFICATION_STALE_SECONDS };
  if (v.state === 'ok') return { state: 'ok', ...seen, upToId: scope.all ? v.upToId : null };
  const at: ChainBreak = { entryId: v.entryId, chain: v.chain, seq: v.seq, problem: v.problem };
  return { state: 'broken', ...seen, at: (await breakVisible(db, scope, at.entryId)) ? at : null };
}

/** Whether a scoped viewer may see the broken entry: it exists and is about a run in their scope. */
async function breakVisible(db: Db, scope: WorkflowScope, entryId: string | null): Promise<boolean> {
  if (scope.all) return true;
  if (entryId === null) return false;
  const rows = await db.$queryRaw<unknown[]>`
    SELECT 1 FROM audit_entry a WHERE a.id = ${BigInt(entryId)} AND ${runInScopeSql(scope, Prisma.sql`a.run_id`)}`;
  return rows.length > 0;
}

/** "40 s", "3 min", "2 h": how long ago, for a badge. */
export function describeAge(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}
