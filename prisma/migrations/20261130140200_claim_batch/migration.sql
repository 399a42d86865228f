-- Group commit for claims (issues 2 and 7). Functions only.
--
-- A claim writes six rows (key head, effect, attempt, transition, audit entry, chain head) and, with
-- one claim per transaction, pays for a commit (a WAL flush) each time: measured, the commit was
-- about half of a claim's cost. ledger_claim_batch runs several independent claims, each through the
-- unchanged ledger_claim, in one transaction, so they share one commit. Nothing about a single claim
-- changes: every claim still takes the same race-proof path (S1, S3), writes the same rows and audit
-- entry (A1), and no caller is told it won before the transaction holding its pending row commits.
--
-- Claims run in key order, whatever order the caller passed them in: two batches that share keys
-- then take their row locks in the same order and cannot deadlock on each other. The same key twice
-- in one batch is two claimers of that key: the first wins, the second sees the first's row (same
-- transaction) and is told it skipped, exactly as if they had raced in separate transactions.
-- Each result row carries the caller's position (ord) so the caller can hand every claimer its own.
CREATE FUNCTION ledger_claim_batch(
  p_keys text[], p_tools text[], p_actions text[], p_record_ids text[], p_targets text[],
  p_target_types text[], p_trigger_ids text[], p_run_ids uuid[], p_actor_kinds text[],
  p_actor_ids text[], p_actor_labels text[], p_lease_seconds integer[], p_requests jsonb[]
) RETURNS TABLE (
  ord integer, claimed boolean, epoch integer, state "EffectState", attempt_id uuid, idempotency_key text,
  changed_by text, changed_at timestamptz, effect_id bigint
)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  n integer := coalesce(array_length(p_keys, 1), 0);
  i integer;
BEGIN
  IF n <> coalesce(array_length(p_tools, 1), 0) OR n <> coalesce(array_length(p_actions, 1), 0)
     OR n <> coalesce(array_length(p_record_ids, 1), 0) OR n <> coalesce(array_length(p_targets, 1), 0)
     OR n <> coalesce(array_length(p_target_types, 1), 0) OR n <> coalesce(array_length(p_trigger_ids, 1), 0)
     OR n <> coalesce(array_length(p_run_ids, 1), 0) OR n <> coalesce(array_length(p_actor_kinds, 1), 0)
     OR n <> coalesce(array_length(p_actor_ids, 1), 0) OR n <> coalesce(array_length(p_actor_labels, 1), 0)
     OR n <> coalesce(array_length(p_lease_seconds, 1), 0) OR n <> coalesce(array_length(p_requests, 1), 0) THEN
    RAISE EXCEPTION 'ledger_claim_batch: every argument array must hold one element per claim' USING ERRCODE = '22023';
  END IF;
  FOR i IN SELECT u.o::integer FROM unnest(p_keys) WITH ORDINALITY AS u(k, o) ORDER BY u.k COLLATE "C", u.o LOOP
    RETURN QUERY
      SELECT i, c.claimed, c.epoch, c.state, c.attempt_id, c.idempotency_key, c.changed_by, c.changed_at, c.effect_id
        FROM ledger_claim(p_keys[i], p_tools[i], p_actions[i], p_record_ids[i], p_targets[i],
                          p_target_types[i]::"TargetType", p_trigger_ids[i], p_run_ids[i],
                          p_actor_kinds[i]::"ActorKind", p_actor_ids[i], p_actor_labels[i],
                          p_lease_seconds[i], p_requests[i]) c;
  END LOOP;
END
$$;

GRANT EXECUTE ON FUNCTION ledger_claim_batch TO ledger_app;
