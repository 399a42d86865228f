// A replay item's outcome (sent, skipped, failed, unknown, interrupted), written once. An item left
// 'interrupted' (its claim is ours but no handler finished it) may still get its real outcome.
import { sqlRows, type Db } from '../db/client.ts';
import type { AlongsideWrite } from '../ledger/index.ts';

export type ItemOutcome = 'sent' | 'skipped' | 'failed' | 'unknown' | 'interrupted';

/** How one outcome moves the replay's counters (interrupted counts as unknown until decided). */
export const outcomeCounts = (outcome: ItemOutcome) => ({
  sent: outcome === 'sent' ? 1 : 0,
  skipped: outcome === 'skipped' ? 1 : 0,
  failed: outcome === 'failed' ? 1 : 0,
  unknown: outcome === 'unknown' || outcome === 'interrupted' ? 1 : 0,
});

// The item's outcome ($1 item id, $2 outcome, $3 note), written only while `gate` says so. `was`
// tells the caller how the replay's counters move.
const OUTCOME_CTES = `
  prev AS (SELECT ri.id, ri.outcome FROM replay_item ri WHERE ri.id = $1::bigint AND $2::text IS NOT NULL AND (SELECT ok FROM gate) FOR UPDATE),
  upd AS (
    UPDATE replay_item r SET outcome = $2, note = $3
      FROM prev
     WHERE r.id = prev.id AND (prev.outcome IS NULL OR (prev.outcome = 'interrupted' AND $2 <> 'interrupted'))
    RETURNING coalesce(prev.outcome, '-') AS was)`;

// Outside the executor's hot path (the reconciler settling an interrupted item): the counters move in
// the same statement.
const SET_OUTCOME_SQL = `
  WITH gate AS (SELECT true AS ok), ${OUTCOME_CTES},
  rep AS (
    UPDATE replay SET
      sent = sent + (SELECT count(*) FROM upd) * $5::int,
      skipped = skipped + (SELECT count(*) FROM upd) * $6::int,
      failed = failed + (SELECT count(*) FROM upd) * $7::int,
      unknown = unknown + (SELECT count(*) FROM upd) * $8::int - (SELECT count(*) FROM upd WHERE was = 'interrupted')
     WHERE id = $4::uuid AND EXISTS (SELECT 1 FROM upd)
    RETURNING id)
  SELECT (SELECT was FROM upd) AS was`;

// The executor's outcome write: the replay row is not touched per item (every handler updating that
// one row would serialize all sends on its lock, one commit after the other); the handler adds its
// items to the counters in one UPDATE every half second (outcome-tally.ts) and the completion recounts.
const ITEM_OUTCOME_SQL = `WITH gate AS (SELECT true AS ok), ${OUTCOME_CTES} SELECT (SELECT was FROM upd) AS was`;

/** Records an item's outcome and moves the replay's counters in the same statement. */
export async function setOutcome(
  db: Db,
  replayId: string,
  itemId: bigint | string,
  outcome: ItemOutcome,
  note: string,
): Promise<void> {
  const c = outcomeCounts(outcome);
  await sqlRows(db, SET_OUTCOME_SQL, [
    String(itemId),
    outcome,
    note.slice(0, 2000),
    replayId,
    c.sent,
    c.skipped,
    c.failed,
    c.unknown,
  ]);
}

/** Records an item's outcome without touching the replay row; returns the outcome it replaced
 *  ('-' for none), or null when the item already had one (nothing written). */
export async function recordItemOutcome(
  db: Db,
  itemId: string,
  outcome: ItemOutcome,
  note: string,
): Promise<string | null> {
  const [row] = await sqlRows<{ was: string | null }>(
    db,
    ITEM_OUTCOME_SQL,
    [itemId, outcome, note.slice(0, 2000)],
    'replay_outcome',
  );
  return row?.was ?? null;
}

/** The item's outcome written in the statement of the ledger transition that justifies it, only when
 *  the transition is accepted: a state and the outcome it explains commit together. Its result is
 *  `was`, as recordItemOutcome's. */
export function outcomeAlongside(itemId: string, outcome: ItemOutcome, note: string): AlongsideWrite {
  return {
    name: 'replay_item_outcome',
    ctes: OUTCOME_CTES,
    values: [itemId, outcome, note.slice(0, 2000)],
    result: '(SELECT was FROM upd)',
  };
}
