-- Group commit for claims. A claim writes six rows (key head, effect, attempt, transition, audit
-- entry, chain head) and, with one claim per transaction, pays for a commit (a WAL flush) each time:
-- measured, the commit was about half of a claim's cost. ledger_claim_batch runs several independent
-- claims in one transaction, so they share one commit. Nothing about a single claim changes: each
-- writes the same rows and audit entry as ledger_claim (A1), exactly one claimer of a key wins (S1,
-- S3), and no caller is told it won before the transaction holding its pending row commits.
--
-- Keys never claimed before (the common case) are claimed set-wise: one INSERT per table for the
-- whole batch instead of one per claim, which is where the batch saves database CPU. That is exactly
-- what ledger_claim does for such a key (its key head insert succeeds, so the key's first epoch is
-- new and its effect insert cannot conflict). Claimers of keys already held lose, answered set-wise
-- from the read ledger_claim itself makes first. Every other claim in the batch (a failed or
-- awaiting-claim row to take, a key another transaction is claiming right now) goes through
-- ledger_claim itself. The second and third passes are skipped when the first claimed every key.
--
-- Key heads are inserted in key order, then the remaining claims run in key order: two batches that
-- share new keys take those locks in the same order. A batch that still deadlocks with another
-- writer is rolled back whole by PostgreSQL, and the caller (lib/db/group-commit.ts) re-runs each
-- of its claims on its own. The same key twice in one batch is two claimers of that key: the first
-- wins, the second sees the first's row (same transaction) and is told it skipped, exactly as if
-- they had raced in separate transactions. Each result row carries the caller's position (ord).
--
-- Its plans are generic (plan_cache_mode = force_generic_plan): its statements take arrays of claims
-- whose length changes from call to call, so PostgreSQL judged every custom plan cheaper and
-- re-planned the six-table claim statement on every call (20261130160000_claim_batch_fixed_cost).
-- Runs as the ledger's owner (SECURITY DEFINER): the application role may not write the ledger's
-- tables itself, only through this function and its rules. search_path is pinned (pg_temp last) so
-- a caller's temporary table can never stand in for a ledger table.
CREATE OR REPLACE FUNCTION ledger_claim_batch(
  p_keys text[], p_tools text[], p_actions text[], p_record_ids text[], p_targets text[],
  p_target_types text[], p_trigger_ids text[], p_run_ids uuid[], p_actor_kinds text[],
  p_actor_ids text[], p_actor_labels text[], p_lease_seconds integer[], p_requests jsonb[]
) RETURNS TABLE (
  ord integer, claimed boolean, epoch integer, state "EffectState", attempt_id uuid, idempotency_key text,
  changed_by text, changed_at timestamptz, effect_id bigint
)
LANGUAGE plpgsql SECURITY DEFINER
SET plan_cache_mode = force_generic_plan
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  n integer := coalesce(array_length(p_keys, 1), 0);
  i integer;
  r record;
  v_done boolean[] := array_fill(false, ARRAY[n]);
  v_left integer := n;
BEGIN
  IF n <> coalesce(array_length(p_tools, 1), 0) OR n <> coalesce(array_length(p_actions, 1), 0)
     OR n <> coalesce(array_length(p_record_ids, 1), 0) OR n <> coalesce(array_length(p_targets, 1), 0)
     OR n <> coalesce(array_length(p_target_types, 1), 0) OR n <> coalesce(array_length(p_trigger_ids, 1), 0)
     OR n <> coalesce(array_length(p_run_ids, 1), 0) OR n <> coalesce(array_length(p_actor_kinds, 1), 0)
     OR n <> coalesce(array_length(p_actor_ids, 1), 0) OR n <> coalesce(array_length(p_actor_labels, 1), 0)
     OR n <> coalesce(array_length(p_lease_seconds, 1), 0) OR n <> coalesce(array_length(p_requests, 1), 0) THEN
    RAISE EXCEPTION 'ledger_claim_batch: every argument array must hold one element per claim' USING ERRCODE = '22023';
  END IF;
  IF n = 0 THEN
    RETURN;
  END IF;

  -- Keys never claimed before: the same rows ledger_claim writes for them, one statement per table.
  FOR r IN
    WITH input AS (
      SELECT u.o::integer AS o, u.key, u.tool, u.action, u.record_id, u.target, u.target_type::"TargetType" AS target_type,
             u.trigger_id, u.run_id, u.actor_kind::"ActorKind" AS actor_kind, u.actor_id, u.actor_label, u.lease_seconds, u.request
        FROM unnest(p_keys, p_tools, p_actions, p_record_ids, p_targets, p_target_types, p_trigger_ids, p_run_ids,
                    p_actor_kinds, p_actor_ids, p_actor_labels, p_lease_seconds, p_requests)
             WITH ORDINALITY AS u(key, tool, action, record_id, target, target_type, trigger_id, run_id,
                                  actor_kind, actor_id, actor_label, lease_seconds, request, o)
    ), first_claimer AS (
      SELECT DISTINCT ON (i.key) i.* FROM input i ORDER BY i.key, i.o
    ), heads AS (
      INSERT INTO effect_key AS k (key, tool, action, record_id, target, target_type, trigger_id, run_id,
                                   current_epoch, state, changed_by, changed_at, created_at)
      SELECT f.key, f.tool, f.action, f.record_id, f.target, f.target_type, f.trigger_id, f.run_id,
             1, 'pending', f.actor_label, now(), now()
        FROM first_claimer f ORDER BY f.key
      ON CONFLICT (key) DO NOTHING
      RETURNING k.key
    ), fresh AS MATERIALIZED (
      SELECT f.*, gen_random_uuid() AS attempt, ledger_idempotency_key(f.key, 1) AS idem
        FROM first_claimer f JOIN heads h ON h.key = f.key
    ), effects AS (
      INSERT INTO effect AS e (key, epoch, state, run_id, idempotency_key, lease_expires_at,
                               changed_by_kind, changed_by, changed_at, created_at)
      SELECT f.key, 1, 'pending', f.run_id, f.idem, now() + make_interval(secs => f.lease_seconds),
             f.actor_kind, f.actor_label, now(), now()
        FROM fresh f ORDER BY f.key
      RETURNING e.id, e.key
    ), attempts AS (
      INSERT INTO attempt (id, effect_id, key, epoch, run_id, started_at)
      SELECT f.attempt, e.id, f.key, 1, f.run_id, now() FROM fresh f JOIN effects e ON e.key = f.key
    ), transitions AS (
      INSERT INTO effect_transition (effect_id, key, epoch, from_state, to_state, actor_kind, actor_id, attempt_id, at)
      SELECT e.id, f.key, 1, NULL, 'pending', f.actor_kind, f.actor_id, f.attempt, now() FROM fresh f JOIN effects e ON e.key = f.key
    ), audits AS (
      INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, action,
                               subject_type, subject_id, run_id, before_state, after_state, outcome, detail,
                               ip, user_agent, request_id)
      SELECT 'effect:' || f.key, 1, '', '', now(), f.actor_kind, f.actor_id, f.actor_label, 'effect.claim',
             'effect', f.key, f.run_id, NULL, 'pending', 'ok',
             jsonb_build_object('epoch', 1, 'attemptId', f.attempt),
             f.request->>'ip', f.request->>'userAgent', f.request->>'requestId'
        FROM fresh f ORDER BY f.key
    )
    SELECT f.o, f.attempt, f.idem, f.actor_label, e.id AS effect_id FROM fresh f JOIN effects e ON e.key = f.key
  LOOP
    v_done[r.o] := true;
    v_left := v_left - 1;
    ord := r.o; claimed := true; epoch := 1; state := 'pending'; attempt_id := r.attempt;
    idempotency_key := r.idem; changed_by := r.actor_label; changed_at := now(); effect_id := r.effect_id;
    RETURN NEXT;
  END LOOP;

  -- Every claim was a fresh key (the common case): nothing left to read.
  IF v_left = 0 THEN
    RETURN;
  END IF;

  -- Keys already held (pending, done, unknown, revoked or stuck at their current epoch): their claimers
  -- lose, answered set-wise from the same unlocked read ledger_claim itself makes before it would lock
  -- anything (ledger_claim_peek, the one definition of "held"). A key whose row this statement cannot
  -- see yet (another transaction's claim still in flight) is left to ledger_claim below, which waits
  -- for that transaction as a lone claim would.
  FOR r IN
    SELECT p.ord AS o, p.epoch, p.state, p.idempotency_key, p.changed_by, p.changed_at, p.effect_id AS id
      FROM ledger_claim_peek(p_keys) p
     WHERE NOT v_done[p.ord]
  LOOP
    v_done[r.o] := true;
    v_left := v_left - 1;
    ord := r.o; claimed := false; epoch := r.epoch; state := r.state; attempt_id := NULL;
    idempotency_key := r.idempotency_key; changed_by := r.changed_by; changed_at := r.changed_at; effect_id := r.id;
    RETURN NEXT;
  END LOOP;

  IF v_left = 0 THEN
    RETURN;
  END IF;

  -- Everything else (a failed or awaiting-claim row to take, a claim still in flight elsewhere), one
  -- claim at a time through ledger_claim, in key order.
  FOR i IN SELECT u.o::integer FROM unnest(p_keys) WITH ORDINALITY AS u(k, o) ORDER BY u.k, u.o LOOP
    CONTINUE WHEN v_done[i];
    RETURN QUERY
      SELECT i, c.claimed, c.epoch, c.state, c.attempt_id, c.idempotency_key, c.changed_by, c.changed_at, c.effect_id
        FROM ledger_claim(p_keys[i], p_tools[i], p_actions[i], p_record_ids[i], p_targets[i],
                          p_target_types[i]::"TargetType", p_trigger_ids[i], p_run_ids[i],
                          p_actor_kinds[i]::"ActorKind", p_actor_ids[i], p_actor_labels[i],
                          p_lease_seconds[i], p_requests[i]) c;
  END LOOP;
END
$$;
