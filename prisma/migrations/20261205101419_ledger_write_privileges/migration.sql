-- The application role changes ledger rows only through the ledger's rules (A3, S7, P1, R1).
-- Before, ledger_app could UPDATE any column of effect, effect_key, effect_transition, attempt, plan
-- and plan_item; the transition guard watched only state, key, epoch, receipt and awaiting_claim, so
-- a statement outside the ledger's functions could move a lease, rewrite who changed an effect or a
-- stored provider response, or edit a plan under review. Now:
--   * the functions that write effects, heads, attempts and transitions run as the owner
--     (SECURITY DEFINER, search_path pinned), and the application role holds no INSERT or UPDATE on
--     those tables except the columns its own commands write;
--   * the remaining column grants are watched by triggers whose WHEN clauses refuse what no rule
--     makes (ledger_row_refuse, EL004).

-- prisma/sql/functions/ledger_bump.sql (changed: SECURITY DEFINER, SET)
-- Epoch bump (E1-E3): only done, revoked or stuck can be superseded; pending and unknown block it.
-- The head row lock serializes bumps; the new epoch starts pending and awaiting its claim, and
-- since the old epoch's row already exists, no racing claim can ever win on the old epoch.
-- Runs as the ledger's owner (SECURITY DEFINER): the application role may not write the ledger's
-- tables itself, only through this function and its rules. search_path is pinned (pg_temp last) so
-- a caller's temporary table can never stand in for a ledger table.
CREATE OR REPLACE FUNCTION ledger_bump(
  p_key text, p_expected_epoch integer,
  p_actor_kind "ActorKind", p_actor_id text, p_actor_label text, p_actor_role text,
  p_reason text, p_detail jsonb, p_request jsonb
) RETURNS TABLE (ok boolean, epoch integer, from_state "EffectState", state "EffectState", problem text)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_head effect_key%ROWTYPE;
  v_row effect%ROWTYPE;
  v_problem text;
  v_new bigint;
  v_epoch integer;
BEGIN
  -- Lock order: the effect row, then the key head, as ledger_claim and ledger_transition do
  -- (head first here deadlocked against a revoke or a re-claim of the same epoch). The epoch is
  -- read unlocked, then re-checked under both locks: a bump that won meanwhile makes this stale.
  SELECT k.current_epoch INTO v_epoch FROM effect_key k WHERE k.key = p_key;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT * INTO v_row FROM effect e WHERE e.key = p_key AND e.epoch = v_epoch FOR UPDATE;
  SELECT * INTO v_head FROM effect_key k WHERE k.key = p_key FOR UPDATE;

  IF v_head.current_epoch <> v_epoch THEN
    SELECT * INTO v_row FROM effect e WHERE e.key = p_key AND e.epoch = v_head.current_epoch;
    v_problem := 'stale epoch: the key is at epoch ' || v_head.current_epoch;
  ELSIF p_expected_epoch IS NOT NULL AND p_expected_epoch <> v_head.current_epoch THEN
    v_problem := 'stale epoch: the key is at epoch ' || v_head.current_epoch;
  ELSIF v_row.state NOT IN ('done', 'revoked', 'stuck') THEN
    v_problem := 'only done, revoked or stuck can be superseded; this epoch is ' || v_row.state;
  END IF;

  IF v_problem IS NOT NULL THEN
    INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, actor_role,
                             action, subject_type, subject_id, run_id, before_state, after_state, reason,
                             outcome, detail, ip, user_agent, request_id)
    VALUES ('refused:effect:' || p_key, 0, '', '', now(), p_actor_kind, p_actor_id, p_actor_label, p_actor_role,
            'effect.bump', 'effect', p_key, v_row.run_id, v_row.state::text, NULL, p_reason, 'refused',
            jsonb_build_object('epoch', v_head.current_epoch, 'why', v_problem) || coalesce(p_detail, '{}'::jsonb),
            p_request->>'ip', p_request->>'userAgent', p_request->>'requestId');
    RETURN QUERY SELECT false, v_head.current_epoch, v_row.state, v_row.state, v_problem;
    RETURN;
  END IF;

  INSERT INTO effect (key, epoch, state, run_id, idempotency_key, lease_expires_at, awaiting_claim,
                      changed_by_kind, changed_by, changed_at, created_at)
  VALUES (p_key, v_head.current_epoch + 1, 'pending', v_row.run_id,
          ledger_idempotency_key(p_key, v_head.current_epoch + 1), NULL, true,
          p_actor_kind, p_actor_label, now(), now())
  RETURNING id INTO v_new;

  UPDATE effect_key k SET current_epoch = v_head.current_epoch + 1, state = 'pending',
         changed_by = p_actor_label, changed_at = now()
   WHERE k.key = p_key;

  INSERT INTO effect_transition (effect_id, key, epoch, from_state, to_state, actor_kind, actor_id, reason, evidence, at)
  VALUES (v_new, p_key, v_head.current_epoch + 1, NULL, 'pending', p_actor_kind, p_actor_id, p_reason,
          jsonb_build_object('supersedes', v_head.current_epoch, 'previousState', v_row.state) || coalesce(p_detail, '{}'::jsonb), now());

  INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, actor_role,
                           action, subject_type, subject_id, run_id, before_state, after_state, reason,
                           outcome, detail, ip, user_agent, request_id)
  VALUES ('effect:' || p_key, 0, '', '', now(), p_actor_kind, p_actor_id, p_actor_label, p_actor_role,
          'effect.bump', 'effect', p_key, v_row.run_id, v_row.state::text, 'pending', p_reason, 'ok',
          jsonb_build_object('fromEpoch', v_head.current_epoch, 'toEpoch', v_head.current_epoch + 1) || coalesce(p_detail, '{}'::jsonb),
          p_request->>'ip', p_request->>'userAgent', p_request->>'requestId');

  RETURN QUERY SELECT true, v_head.current_epoch + 1, v_row.state, 'pending'::"EffectState", NULL::text;
END
$$;

-- prisma/sql/functions/ledger_claim.sql (changed: SECURITY DEFINER, SET)
-- Claim (S1, S3, E1): one round trip, one transaction, no lock held across a provider call.
-- Of any number of concurrent claimers exactly one wins: the INSERT ... ON CONFLICT DO NOTHING on
-- (key, epoch) for a new epoch, or the conditional UPDATE of a failed / awaiting-claim row (the row
-- lock makes every other updater re-check the state and find it taken). Losers get the current
-- state and write nothing. Callers (lib/ledger/commands/claim.ts) derive the key and authorize.
-- Runs as the ledger's owner (SECURITY DEFINER): the application role may not write the ledger's
-- tables itself, only through this function and its rules. search_path is pinned (pg_temp last) so
-- a caller's temporary table can never stand in for a ledger table.
CREATE OR REPLACE FUNCTION ledger_claim(
  p_key text, p_tool text, p_action text, p_record_id text, p_target text, p_target_type "TargetType",
  p_trigger_id text, p_run_id uuid, p_actor_kind "ActorKind", p_actor_id text, p_actor_label text,
  p_lease_seconds integer, p_request jsonb
) RETURNS TABLE (
  claimed boolean, epoch integer, state "EffectState", attempt_id uuid, idempotency_key text,
  changed_by text, changed_at timestamptz, effect_id bigint
)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_epoch integer;
  v_effect bigint;
  v_from "EffectState";
  v_awaiting boolean;
  v_attempt uuid;
  v_idem text;
BEGIN
  INSERT INTO effect_key AS k (key, tool, action, record_id, target, target_type, trigger_id, run_id,
                               current_epoch, state, changed_by, changed_at, created_at)
  VALUES (p_key, p_tool, p_action, p_record_id, p_target, p_target_type, p_trigger_id, p_run_id,
          1, 'pending', p_actor_label, now(), now())
  ON CONFLICT (key) DO NOTHING
  RETURNING k.current_epoch INTO v_epoch;
  IF v_epoch IS NULL THEN
    SELECT k.current_epoch INTO v_epoch FROM effect_key k WHERE k.key = p_key;
  END IF;
  v_idem := ledger_idempotency_key(p_key, v_epoch);

  INSERT INTO effect AS e (key, epoch, state, run_id, idempotency_key, lease_expires_at,
                           changed_by_kind, changed_by, changed_at, created_at)
  VALUES (p_key, v_epoch, 'pending', p_run_id, v_idem, now() + make_interval(secs => p_lease_seconds),
          p_actor_kind, p_actor_label, now(), now())
  ON CONFLICT (key, epoch) DO NOTHING
  RETURNING e.id INTO v_effect;

  IF v_effect IS NULL THEN
    -- The epoch exists. Only a failed row (S3) or a pending row awaiting its claim can be taken;
    -- the unlocked read lets the common case (held pending, done, ...) skip without queueing on
    -- the row lock, and the locked re-read makes exactly one concurrent taker win.
    SELECT e.state, e.awaiting_claim INTO v_from, v_awaiting FROM effect e WHERE e.key = p_key AND e.epoch = v_epoch;
    IF v_from = 'failed' OR (v_from = 'pending' AND v_awaiting) THEN
      SELECT e.id, e.state, e.awaiting_claim INTO v_effect, v_from, v_awaiting
        FROM effect e WHERE e.key = p_key AND e.epoch = v_epoch FOR UPDATE;
      IF v_from = 'failed' OR (v_from = 'pending' AND v_awaiting) THEN
        UPDATE effect e
           SET state = 'pending', awaiting_claim = false, run_id = p_run_id,
               lease_expires_at = now() + make_interval(secs => p_lease_seconds),
               changed_by_kind = p_actor_kind, changed_by = p_actor_label, changed_at = now()
         WHERE e.id = v_effect;
      ELSE
        v_effect := NULL;
      END IF;
    END IF;
    IF v_effect IS NULL THEN
      RETURN QUERY
        SELECT false, e.epoch, e.state, NULL::uuid, e.idempotency_key, e.changed_by, e.changed_at, e.id
          FROM effect e WHERE e.key = p_key AND e.epoch = v_epoch;
      RETURN;
    END IF;
  END IF;

  v_attempt := gen_random_uuid();
  IF v_from IS NOT NULL THEN
    -- A re-claim: the head already exists and shows the old state.
    UPDATE effect_key k SET state = 'pending', changed_by = p_actor_label, changed_at = now()
     WHERE k.key = p_key AND k.current_epoch = v_epoch;
  END IF;

  -- Attempt, transition and audit entry in one statement (fewer executor round trips per claim).
  WITH new_attempt AS (
    INSERT INTO attempt (id, effect_id, key, epoch, run_id, started_at)
    VALUES (v_attempt, v_effect, p_key, v_epoch, p_run_id, now())
  ), new_transition AS (
    INSERT INTO effect_transition (effect_id, key, epoch, from_state, to_state, actor_kind, actor_id, attempt_id, at)
    VALUES (v_effect, p_key, v_epoch, v_from, 'pending', p_actor_kind, p_actor_id, v_attempt, now())
  )
  INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, action,
                           subject_type, subject_id, run_id, before_state, after_state, outcome, detail,
                           ip, user_agent, request_id)
  VALUES ('effect:' || p_key, 0, '', '', now(), p_actor_kind, p_actor_id, p_actor_label, 'effect.claim',
          'effect', p_key, p_run_id, v_from::text, 'pending', 'ok',
          jsonb_build_object('epoch', v_epoch, 'attemptId', v_attempt),
          p_request->>'ip', p_request->>'userAgent', p_request->>'requestId');

  RETURN QUERY SELECT true, v_epoch, 'pending'::"EffectState", v_attempt, v_idem, p_actor_label, now(), v_effect;
END
$$;

-- prisma/sql/functions/ledger_claim_batch.sql (changed: SECURITY DEFINER, SET)
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

-- prisma/sql/functions/ledger_claim_frozen.sql (changed: SECURITY DEFINER, SET)
-- A forced replay's claim of one frozen target (F3, F4): ledger_claim, made only while the target is
-- still in the state the executor decided on (its fingerprint: view state, epoch and time of its last
-- change, as lib/replay/set.ts computes it). The executor reads a window of items, then waits for the
-- provider's rate limit, possibly for minutes, before it claims; a target that another actor moved
-- meanwhile (failed again by an agent, claimed and given up, bumped to a new epoch) must not be sent.
-- The comparison is made under the same locks ledger_claim takes, in its lock order (the effect row,
-- then the key head), so no change can slip in between the check and the claim.
-- A key that did not exist is created here, with ledger_claim's own head insert: while this
-- transaction holds the new head, a concurrent claimer waits for it; one that got there first makes
-- the target moved. Otherwise the row is ledger_claim's, with moved_to NULL; when the target moved,
-- nothing is written and moved_to is its fingerprint now.
-- Runs as the ledger's owner (SECURITY DEFINER): the application role may not write the ledger's
-- tables itself, only through this function and its rules. search_path is pinned (pg_temp last) so
-- a caller's temporary table can never stand in for a ledger table.
CREATE OR REPLACE FUNCTION ledger_claim_frozen(
  p_key text, p_tool text, p_action text, p_record_id text, p_target text, p_target_type "TargetType",
  p_trigger_id text, p_run_id uuid, p_actor_kind "ActorKind", p_actor_id text, p_actor_label text,
  p_lease_seconds integer, p_request jsonb, p_expected text
) RETURNS TABLE (
  claimed boolean, epoch integer, state "EffectState", attempt_id uuid, idempotency_key text,
  changed_by text, changed_at timestamptz, effect_id bigint, moved_to text
)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_epoch integer;
  v_head effect_key%ROWTYPE;
  v_row effect%ROWTYPE;
  v_now text;
BEGIN
  SELECT k.current_epoch INTO v_epoch FROM effect_key k WHERE k.key = p_key;
  IF NOT FOUND THEN
    IF split_part(p_expected, '@', 1) = 'not_sent' THEN
      INSERT INTO effect_key AS k (key, tool, action, record_id, target, target_type, trigger_id, run_id,
                                   current_epoch, state, changed_by, changed_at, created_at)
      VALUES (p_key, p_tool, p_action, p_record_id, p_target, p_target_type, p_trigger_id, p_run_id,
              1, 'pending', p_actor_label, now(), now())
      ON CONFLICT (key) DO NOTHING
      RETURNING k.current_epoch INTO v_epoch;
      IF v_epoch IS NOT NULL THEN
        RETURN QUERY SELECT c.*, NULL::text FROM ledger_claim(p_key, p_tool, p_action, p_record_id, p_target,
          p_target_type, p_trigger_id, p_run_id, p_actor_kind, p_actor_id, p_actor_label, p_lease_seconds, p_request) c;
        RETURN;
      END IF;
      -- Another claimer created the key between the read above and this insert.
      SELECT k.current_epoch INTO v_epoch FROM effect_key k WHERE k.key = p_key;
    END IF;
    IF v_epoch IS NULL THEN
      RETURN QUERY SELECT false, 1, NULL::"EffectState", NULL::uuid, ledger_idempotency_key(p_key, 1),
                          NULL::text, NULL::timestamptz, NULL::bigint, 'gone'::text;
      RETURN;
    END IF;
  END IF;

  SELECT * INTO v_row FROM effect e WHERE e.key = p_key AND e.epoch = v_epoch FOR UPDATE;
  SELECT * INTO v_head FROM effect_key k WHERE k.key = p_key FOR UPDATE;
  IF v_head.current_epoch = v_epoch THEN
    v_now := CASE WHEN v_row.state = 'pending' AND v_row.awaiting_claim THEN 'awaiting_claim'
                  WHEN v_row.state = 'pending' THEN 'in_flight'
                  ELSE v_row.state::text END
             || '@' || v_epoch || '@'
             || coalesce(to_char(v_head.changed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '-');
  ELSE
    -- A bump committed between the unlocked read and the locks: the epoch moved on.
    v_now := v_head.state::text || '@' || v_head.current_epoch || '@'
             || coalesce(to_char(v_head.changed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '-');
  END IF;
  IF v_head.current_epoch <> v_epoch OR v_now IS DISTINCT FROM p_expected THEN
    RETURN QUERY SELECT false, v_head.current_epoch, v_head.state, NULL::uuid,
                        ledger_idempotency_key(p_key, v_head.current_epoch), v_head.changed_by, v_head.changed_at,
                        NULL::bigint, v_now;
    RETURN;
  END IF;
  RETURN QUERY SELECT c.*, NULL::text FROM ledger_claim(p_key, p_tool, p_action, p_record_id, p_target,
    p_target_type, p_trigger_id, p_run_id, p_actor_kind, p_actor_id, p_actor_label, p_lease_seconds, p_request) c;
END
$$;

-- prisma/sql/functions/ledger_revoke_planned.sql (changed: SECURITY DEFINER, SET)
-- Revoking a planned target that was never claimed (S5: (none, planned) -> revoked): an operator
-- keeps a known-bad or withdrawn recipient out of every send before the first one. The key comes
-- from the approved plan row (P1), never from the caller's text. The key's head and its epoch-1 row
-- are created revoked, with the transition and the audit entry, in one transaction. If a claim got
-- there first (the key exists), nothing is written and `exists` is true: the caller revokes the
-- existing epoch through ledger_transition instead, under its lock.
-- Runs as the ledger's owner (SECURITY DEFINER): the application role may not write the ledger's
-- tables itself, only through this function and its rules. search_path is pinned (pg_temp last) so
-- a caller's temporary table can never stand in for a ledger table.
CREATE OR REPLACE FUNCTION ledger_revoke_planned(
  p_key text, p_actor_kind "ActorKind", p_actor_id text, p_actor_label text, p_actor_role text,
  p_reason text, p_request jsonb
) RETURNS TABLE (ok boolean, "exists" boolean, epoch integer, run_id uuid, changed_at timestamptz, problem text)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_item plan_item%ROWTYPE;
  v_trigger text;
  v_effect bigint;
BEGIN
  SELECT pi.* INTO v_item FROM plan_item pi JOIN plan p ON p.id = pi.plan_id AND p.status = 'approved'
   WHERE pi.key = p_key ORDER BY pi.id LIMIT 1;
  IF NOT FOUND THEN
    RETURN QUERY SELECT false, false, NULL::integer, NULL::uuid, NULL::timestamptz,
      'not a target of an approved plan'::text;
    RETURN;
  END IF;
  SELECT ev.trigger_id INTO v_trigger FROM run r JOIN event ev ON ev.id = r.event_id WHERE r.id = v_item.run_id;

  INSERT INTO effect_key AS k (key, tool, action, record_id, target, target_type, trigger_id, run_id,
                               current_epoch, state, changed_by, changed_at, created_at)
  VALUES (p_key, v_item.tool, v_item.action, v_item.record_id, v_item.target, v_item.target_type, v_trigger,
          v_item.run_id, 1, 'revoked', p_actor_label, now(), now())
  ON CONFLICT (key) DO NOTHING;
  IF NOT FOUND THEN
    RETURN QUERY SELECT false, true, NULL::integer, v_item.run_id, NULL::timestamptz, NULL::text;
    RETURN;
  END IF;

  INSERT INTO effect (key, epoch, state, run_id, idempotency_key, changed_by_kind, changed_by, changed_at, created_at)
  VALUES (p_key, 1, 'revoked', v_item.run_id, ledger_idempotency_key(p_key, 1), p_actor_kind, p_actor_label,
          now(), now())
  RETURNING id INTO v_effect;

  INSERT INTO effect_transition (effect_id, key, epoch, from_state, to_state, actor_kind, actor_id, reason, at)
  VALUES (v_effect, p_key, 1, NULL, 'revoked', p_actor_kind, p_actor_id, p_reason, now());

  INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, actor_role,
                           action, subject_type, subject_id, run_id, before_state, after_state, reason,
                           outcome, detail, ip, user_agent, request_id)
  VALUES ('effect:' || p_key, 1, '', '', now(), p_actor_kind, p_actor_id, p_actor_label, p_actor_role,
          'effect.revoke', 'effect', p_key, v_item.run_id, 'not_sent', 'revoked', p_reason, 'ok',
          jsonb_build_object('epoch', 1, 'planned', true),
          p_request->>'ip', p_request->>'userAgent', p_request->>'requestId');

  RETURN QUERY SELECT true, false, 1, v_item.run_id, now(), NULL::text;
END
$$;

-- prisma/sql/functions/ledger_row_refuse.sql (new function)
-- Refuses a change to a ledger row that no ledger rule makes (EL004): a plan that does not start
-- submitted, a decided (rejected) plan changed again, an effect key renamed, a stored provider
-- response rewritten. The triggers that call it carry the condition in their WHEN clause (evaluated
-- without a function call) and the reason as their argument, so the ledger's own writes never pay
-- for a PL/pgSQL call.
CREATE OR REPLACE FUNCTION ledger_row_refuse() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% on %: %', TG_OP, TG_TABLE_NAME, TG_ARGV[0] USING ERRCODE = 'EL004';
END
$$;

-- prisma/sql/functions/ledger_transition.sql (changed: SECURITY DEFINER, SET)
-- Transition (S2-S7): lock the effect row, check its state is one the caller may move from (the
-- caller passes the allowed sources from lib/ledger/transitions.ts), then write the change, the
-- transition row and the audit entry together. A refusal changes nothing but is itself audited on
-- the subject's "refused:" chain (A4), so the subject's own chain head does not move. A report that
-- names an attempt moves a pending effect only while that attempt is its newest claim.
-- Runs as the ledger's owner (SECURITY DEFINER): the application role may not write the ledger's
-- tables itself, only through this function and its rules. search_path is pinned (pg_temp last) so
-- a caller's temporary table can never stand in for a ledger table.
CREATE OR REPLACE FUNCTION ledger_transition(
  p_key text, p_epoch integer, p_to "EffectState", p_allowed_from "EffectState"[],
  p_actor_kind "ActorKind", p_actor_id text, p_actor_label text, p_actor_role text,
  p_action text, p_reason text, p_receipt text, p_evidence jsonb, p_attempt_id uuid,
  p_request jsonb
) RETURNS TABLE (
  ok boolean, epoch integer, from_state "EffectState", state "EffectState",
  changed_by text, changed_at timestamptz, receipt text, run_id uuid, problem text
)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_row effect%ROWTYPE;
  v_epoch integer := p_epoch;
  v_problem text;
BEGIN
  IF v_epoch IS NULL THEN
    SELECT k.current_epoch INTO v_epoch FROM effect_key k WHERE k.key = p_key;
  END IF;
  SELECT * INTO v_row FROM effect e WHERE e.key = p_key AND e.epoch = v_epoch FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;

  IF NOT (v_row.state = ANY (p_allowed_from)) THEN
    v_problem := 'transition not allowed';
  ELSIF v_row.state = 'pending' AND v_row.awaiting_claim AND p_to <> 'revoked' THEN
    v_problem := 'the effect is awaiting its claim: nobody holds it';
  ELSIF v_row.state = 'pending' AND p_attempt_id IS NOT NULL AND p_attempt_id IS DISTINCT FROM (
      SELECT t.attempt_id FROM effect_transition t
       WHERE t.key = p_key AND t.epoch = v_epoch AND t.to_state = 'pending' AND t.attempt_id IS NOT NULL
       ORDER BY t.id DESC LIMIT 1) THEN
    -- A claim holder's report names its attempt, and counts only while that attempt is the newest
    -- claim of this (key, epoch): a late report of an earlier claim (a retry whose first try did
    -- commit, then the key was claimed again) must not move the claim that holds the key now.
    -- Newest by the claim's transition row, whose id is drawn under the effect row's lock, so it
    -- follows the order the claims took the key; an attempt's started_at is its transaction's start,
    -- which a claim that waited (in a batch, behind a lock) can have earlier than a claim before it.
    v_problem := 'a newer claim holds this key: this attempt''s report comes after it';
  END IF;

  IF v_problem IS NOT NULL THEN
    INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, actor_role,
                             action, subject_type, subject_id, run_id, before_state, after_state, reason,
                             outcome, detail, ip, user_agent, request_id)
    VALUES ('refused:effect:' || p_key, 0, '', '', now(), p_actor_kind, p_actor_id, p_actor_label, p_actor_role,
            p_action, 'effect', p_key, v_row.run_id, v_row.state::text, p_to::text, p_reason, 'refused',
            jsonb_build_object('epoch', v_epoch, 'why', v_problem),
            p_request->>'ip', p_request->>'userAgent', p_request->>'requestId');
    RETURN QUERY SELECT false, v_epoch, v_row.state, v_row.state, v_row.changed_by, v_row.changed_at, v_row.receipt, v_row.run_id, v_problem;
    RETURN;
  END IF;

  UPDATE effect e
     SET state = p_to,
         receipt = coalesce(p_receipt, e.receipt),
         awaiting_claim = (p_to = 'pending'),
         lease_expires_at = CASE WHEN p_to = 'pending' THEN NULL ELSE e.lease_expires_at END,
         changed_by_kind = p_actor_kind, changed_by = p_actor_label, changed_at = now()
   WHERE e.id = v_row.id;

  UPDATE effect_key k SET state = p_to, changed_by = p_actor_label, changed_at = now()
   WHERE k.key = p_key AND k.current_epoch = v_epoch;

  INSERT INTO effect_transition (effect_id, key, epoch, from_state, to_state, actor_kind, actor_id, reason,
                                 evidence, attempt_id, at)
  VALUES (v_row.id, p_key, v_epoch, v_row.state, p_to, p_actor_kind, p_actor_id, p_reason,
          p_evidence, p_attempt_id, now());

  INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, actor_role,
                           action, subject_type, subject_id, run_id, before_state, after_state, reason,
                           outcome, detail, ip, user_agent, request_id)
  VALUES ('effect:' || p_key, 0, '', '', now(), p_actor_kind, p_actor_id, p_actor_label, p_actor_role,
          p_action, 'effect', p_key, v_row.run_id, v_row.state::text, p_to::text, p_reason, 'ok',
          jsonb_strip_nulls(jsonb_build_object('epoch', v_epoch, 'receipt', p_receipt, 'evidence', p_evidence,
                                               'attemptId', p_attempt_id)),
          p_request->>'ip', p_request->>'userAgent', p_request->>'requestId');

  RETURN QUERY SELECT true, v_epoch, v_row.state, p_to, p_actor_label, now(), coalesce(p_receipt, v_row.receipt), v_row.run_id, NULL::text;
END
$$;

-- Nobody but the application role and the owner calls the ledger's writers.
REVOKE EXECUTE ON FUNCTION ledger_claim, ledger_claim_batch, ledger_claim_frozen, ledger_transition, ledger_bump,
  ledger_revoke_planned FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger_claim, ledger_claim_batch, ledger_claim_frozen, ledger_transition, ledger_bump,
  ledger_revoke_planned TO ledger_app;

-- Effects and their heads: written only by the functions above. UPDATE of the key column alone stays
-- granted because SELECT ... FOR UPDATE (lib/ledger/seen.ts locks the rows a console decision
-- compares) needs the UPDATE privilege on one column; changing it is refused below and by
-- effect_guard_transition ("the key and epoch of an effect never change").
REVOKE INSERT, UPDATE ON effect, effect_key, effect_transition FROM ledger_app;
GRANT UPDATE (key) ON effect, effect_key TO ledger_app;
CREATE TRIGGER effect_key_no_rename BEFORE UPDATE ON effect_key
FOR EACH ROW WHEN (NEW.key IS DISTINCT FROM OLD.key)
EXECUTE FUNCTION ledger_row_refuse('the key of an effect never changes');

-- Attempts: created by the claim functions; the application stores the provider's raw response once
-- (lib/ledger/commands/record-response.ts, R1) and retention may only clear its headers and body.
REVOKE INSERT, UPDATE ON attempt FROM ledger_app;
GRANT UPDATE (response_status, response_headers, response_body, responded_at) ON attempt TO ledger_app;
CREATE TRIGGER attempt_response_once BEFORE UPDATE ON attempt
FOR EACH ROW WHEN (
  OLD.responded_at IS NOT NULL AND (
       NEW.responded_at IS DISTINCT FROM OLD.responded_at
    OR NEW.response_status IS DISTINCT FROM OLD.response_status
    OR (NEW.response_headers IS NOT NULL AND NEW.response_headers IS DISTINCT FROM OLD.response_headers)
    OR (NEW.response_body IS NOT NULL AND NEW.response_body IS DISTINCT FROM OLD.response_body)
  )
)
EXECUTE FUNCTION ledger_row_refuse('a stored provider response is kept as received (retention may only clear it)');

-- Plans: submitted by the application (lib/ledger/commands/submit-plan.ts) and decided once
-- (approve-plan.ts, reject-plan.ts); an approved plan and its items are frozen (plan_frozen,
-- plan_item_frozen). Items are only ever inserted.
REVOKE UPDATE ON plan, plan_item FROM ledger_app;
GRANT UPDATE (status, approved_by_id, approved_at, rejected_by_id, rejected_at, rejection_reason) ON plan TO ledger_app;
CREATE TRIGGER plan_starts_submitted BEFORE INSERT ON plan
FOR EACH ROW WHEN (NEW.status <> 'submitted' OR NEW.approved_at IS NOT NULL OR NEW.rejected_at IS NOT NULL)
EXECUTE FUNCTION ledger_row_refuse('a plan starts submitted and undecided');
CREATE TRIGGER plan_decided_once BEFORE UPDATE ON plan
FOR EACH ROW WHEN (OLD.status = 'rejected')
EXECUTE FUNCTION ledger_row_refuse('a rejected plan is final');
