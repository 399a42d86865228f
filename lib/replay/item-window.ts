// A chunk's items, read one window at a time in one query each: everything an item needs (frozen
// key, target, the target's state and fingerprint now, whether this replay claimed it before), never
// the whole set, so the worker's memory does not grow with the replay.
import { sqlRows, type Db } from '../db/client.ts';
import { FINGERPRINT_SQL, type ViewState } from './set.ts';

/** Items read per query; each window is one round trip for all its items. */
export const WINDOW = 128;

/** Rows of one window of a chunk: everything an item needs, read in one query. */
export interface ItemRow {
  id: string;
  key: string;
  target: string;
  note: string | null;
  tool: string;
  action: string;
  record_id: string;
  view_state: ViewState;
  changed_by: string | null;
  fp: string;
  receipt: string | null;
  ours: boolean;
}

// The window's plan must not depend on statistics: a replay's items and its plan items are bulk-inserted
// just before the run, before any ANALYZE, and with no statistics the planner intersected the
// run's whole plan_item index with the key's for every item (and joined every item of the chunk
// before the LIMIT): 0.4 to 1 s of database CPU per window of 128 on an idle machine, several
// seconds with 16 handlers asking at once, against about 2 ms with statistics. So: the window is
// picked first (primary key range, materialized), and `(x = $n) IS TRUE` keeps the run and replay
// conditions out of index choice (a filter, not an index scan), leaving the key lookups.
export const WINDOW_SQL = `
  WITH w AS MATERIALIZED (
    SELECT ri.id, ri.key, ri.target, ri.note FROM replay_item ri
     WHERE ri.id > $4::bigint AND ri.id <= $5::bigint AND (ri.replay_id = $1::uuid) IS TRUE AND ri.outcome IS NULL
     ORDER BY ri.id LIMIT $6)
  SELECT t.id::text AS id, t.key, t.target, t.note, t.tool, t.action, t.record_id, t.view_state, t.changed_by, t.receipt, t.ours,
         ${FINGERPRINT_SQL.text} AS fp
    FROM (
      SELECT w.id, w.key, w.target, w.note, pi.tool, pi.action, pi.record_id,
             coalesce(k.current_epoch, 1) AS epoch,
             CASE WHEN k.key IS NULL THEN 'not_sent'
                  WHEN k.state = 'pending' AND e.awaiting_claim THEN 'awaiting_claim'
                  WHEN k.state = 'pending' THEN 'in_flight'
                  ELSE k.state::text END AS view_state,
             k.changed_by, k.changed_at, e.receipt,
             EXISTS (SELECT 1 FROM effect_transition tr WHERE tr.key = w.key AND tr.actor_id = $3 AND tr.to_state = 'pending') AS ours
        FROM w
        JOIN LATERAL (SELECT pi.tool, pi.action, pi.record_id FROM plan_item pi JOIN plan p ON p.id = pi.plan_id AND p.status = 'approved'
                       WHERE pi.key = w.key AND (pi.run_id = $2::uuid) IS TRUE LIMIT 1) pi ON true
        LEFT JOIN effect_key k ON k.key = w.key
        LEFT JOIN effect e ON e.key = k.key AND e.epoch = k.current_epoch) t
   ORDER BY t.id`;

/** The next window of the chunk after item `after` (exclusive), up to item `last` (inclusive), of the
 *  items still without an outcome. `actorId`: the replay's executor, whose earlier claims are `ours`. */
export function readWindow(
  db: Db,
  w: { replayId: string; runId: string; actorId: string; after: bigint; last: bigint },
): Promise<ItemRow[]> {
  // Unnamed: planned each time on the tables' current sizes.
  return sqlRows<ItemRow>(db, WINDOW_SQL, [w.replayId, w.runId, w.actorId, String(w.after), String(w.last), WINDOW]);
}
