// The replay set of a run, computed in the database: every approved plan item joined with its key's
// current state. Eligible (F2): targets with no effect yet, failed ones (S3: they hold no key) and
// pending ones awaiting a claim (a bump's new epoch, or an unknown support resolved as "not sent").
// Everything stays in SQL, so a 100,000-target run never passes through the app's memory.
import { exactlyOnceOfRun } from '@/lib/read-models/exactly-once.ts';
import { Prisma } from '../db/client.ts';
import type { DbOrTx } from '../db/client.ts';

/** A target's state as the preview shows it: the ledger states, with pending split in two. */
export const VIEW_STATES = [
  'not_sent',
  'awaiting_claim',
  'failed',
  'in_flight',
  'done',
  'unknown',
  'revoked',
  'stuck',
] as const;
export type ViewState = (typeof VIEW_STATES)[number];
export const ELIGIBLE: readonly ViewState[] = ['not_sent', 'awaiting_claim', 'failed'];

/** Why a target is not sent, per F2, exhaustive over the view states. */
export function skipReason(state: ViewState): string | null {
  switch (state) {
    case 'not_sent':
    case 'awaiting_claim':
    case 'failed':
      return null;
    case 'in_flight':
      return 'a claim holds it right now; the reconciler looks at it when its lease expires';
    case 'done':
      return 'done: sending again needs an epoch bump';
    case 'unknown':
      return 'unknown: support must resolve it first (sent / not sent)';
    case 'revoked':
      return 'revoked: sending again needs an epoch bump';
    case 'stuck':
      return 'stuck: needs an epoch bump';
    default:
      return state satisfies never;
  }
}

/** SQL producing one row per approved plan item of the run with its view state and fingerprint. */
export function targetsSql(runId: string): Prisma.Sql {
  return Prisma.sql`
    SELECT pi.id AS item_id, pi.key, pi.tool, pi.action, pi.record_id, pi.target,
           coalesce(k.current_epoch, 1) AS epoch,
           CASE WHEN k.key IS NULL THEN 'not_sent'
                WHEN k.state = 'pending' AND e.awaiting_claim THEN 'awaiting_claim'
                WHEN k.state = 'pending' THEN 'in_flight'
                ELSE k.state::text END AS view_state,
           k.changed_by, k.changed_at
      FROM plan_item pi
      JOIN plan p ON p.id = pi.plan_id AND p.status = 'approved'
      LEFT JOIN effect_key k ON k.key = pi.key
      LEFT JOIN effect e ON e.key = k.key AND e.epoch = k.current_epoch
     WHERE pi.run_id = ${runId}::uuid`;
}

/** The fingerprint frozen per target (F4): state, epoch and the time of its last change. */
export const FINGERPRINT_SQL = Prisma.sql`(t.view_state || '@' || t.epoch || '@' || coalesce(to_char(t.changed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '-'))`;

export interface SetSummary {
  total: number;
  counts: Record<ViewState, number>;
  eligible: number;
  /** SHA-256 over the sorted eligible targets' "key fingerprint" lines: what an approval binds to. */
  setHash: string;
}

export async function summarizeSet(db: DbOrTx, runId: string): Promise<SetSummary> {
  const rows = await db.$queryRaw<{ view_state: ViewState; n: bigint }[]>`
    SELECT t.view_state, count(*) AS n FROM (${targetsSql(runId)}) t GROUP BY t.view_state`;
  const counts = Object.fromEntries(VIEW_STATES.map((s) => [s, 0])) as Record<ViewState, number>;
  for (const r of rows) counts[r.view_state] = Number(r.n);
  const [hash] = await db.$queryRaw<{ h: string }[]>`
    SELECT encode(sha256(convert_to(coalesce(string_agg(t.key || ' ' || ${FINGERPRINT_SQL}, E'\n' ORDER BY t.key), ''), 'UTF8')), 'hex') AS h
      FROM (${targetsSql(runId)}) t WHERE t.view_state IN ('not_sent', 'awaiting_claim', 'failed')`;
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  return { total, counts, eligible: counts.not_sent + counts.awaiting_claim + counts.failed, setHash: hash!.h };
}

/** The run's headline figure (P4), in the shape replay reports keep (stored with the request). */
export async function exactlyOnce(
  db: DbOrTx,
  runId: string,
): Promise<{ exactlyOnce: number; approved: number; ratio: number }> {
  const { numerator, denominator, ratio } = await exactlyOnceOfRun(db, runId);
  return { exactlyOnce: numerator, approved: denominator, ratio };
}
