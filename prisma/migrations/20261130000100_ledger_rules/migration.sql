-- The rules the database itself enforces. Prisma's schema language cannot express triggers,
-- functions or grants, so they live here; the schema-drift test proves tables still match
-- schema.prisma. Error codes: EL001 plan frozen (P1), EL002 transition refused (S7),
-- EL003 audit trail is append-only (A2).

-- ---------------------------------------------------------------------------------------------
-- The application role (A3). The app connects as a LOGIN role that is a member of ledger_app; it
-- owns nothing, so it can neither change the audit trail nor disable the triggers below.
-- ---------------------------------------------------------------------------------------------
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ledger_app') THEN
    CREATE ROLE ledger_app NOLOGIN;
  END IF;
END
$$;

GRANT USAGE ON SCHEMA public TO ledger_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ledger_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ledger_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ledger_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO ledger_app;

-- The ledger forgets nothing (T1): effects, attempts, transitions and plans are never deleted by the app.
REVOKE DELETE ON effect, effect_key, effect_transition, attempt, plan, plan_item FROM ledger_app;
-- Audit entries: insert and read only (A2, A3). Chain heads are written only by the trigger.
REVOKE UPDATE, DELETE, TRUNCATE ON audit_entry FROM ledger_app;
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON audit_chain_head FROM ledger_app;
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON _prisma_migrations FROM ledger_app;

-- ---------------------------------------------------------------------------------------------
-- Audit trail: append-only, hash chained per subject chain (A1, A2).
-- ---------------------------------------------------------------------------------------------

-- The canonical content of an entry: a JSON array in a fixed order (jsonb renders deterministically).
CREATE FUNCTION audit_canonical(e audit_entry) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_array(
    e.chain, e.seq, e.prev_hash,
    to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    e.actor_kind::text, e.actor_id, e.actor_label, e.actor_role,
    e.action, e.subject_type, e.subject_id, e.run_id::text,
    e.before_state, e.after_state, e.reason, e.outcome, e.detail,
    e.ip, e.user_agent, e.request_id
  )::text
$$;

CREATE FUNCTION audit_hash(prev_hash text, canonical text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT encode(sha256(convert_to(prev_hash || E'\n' || canonical, 'UTF8')), 'hex')
$$;

-- Assigns seq, prev_hash, hash and the database time. Runs as the owner (SECURITY DEFINER) so the
-- app can extend a chain without being able to write chain heads itself. Locking only the chain's
-- head row keeps unrelated chains (different effect keys) from serializing on each other.
CREATE FUNCTION audit_chain_append() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
DECLARE
  v_seq integer;
  v_prev text;
  v_created text;
BEGIN
  NEW.at := clock_timestamp();
  -- Fast path, a new chain (every first claim of a key): one write, the head is born final.
  NEW.seq := 1;
  NEW.prev_hash := repeat('0', 64);
  NEW.hash := audit_hash(NEW.prev_hash, audit_canonical(NEW));
  INSERT INTO audit_chain_head (chain, seq, hash) VALUES (NEW.chain, 1, NEW.hash)
  ON CONFLICT (chain) DO NOTHING
  RETURNING chain INTO v_created;
  IF v_created IS NOT NULL THEN
    RETURN NEW;
  END IF;
  -- Existing chain: the head row lock orders appends to this chain only.
  SELECT seq, hash INTO v_seq, v_prev FROM audit_chain_head WHERE chain = NEW.chain FOR UPDATE;
  NEW.seq := v_seq + 1;
  NEW.prev_hash := v_prev;
  NEW.hash := audit_hash(v_prev, audit_canonical(NEW));
  UPDATE audit_chain_head SET seq = NEW.seq, hash = NEW.hash WHERE chain = NEW.chain;
  RETURN NEW;
END
$$;

CREATE TRIGGER audit_entry_chain BEFORE INSERT ON audit_entry
FOR EACH ROW EXECUTE FUNCTION audit_chain_append();

CREATE FUNCTION audit_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the audit trail is append-only: % refused', TG_OP USING ERRCODE = 'EL003';
END
$$;

CREATE TRIGGER audit_entry_no_update BEFORE UPDATE OR DELETE ON audit_entry
FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_entry_no_truncate BEFORE TRUNCATE ON audit_entry
FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_chain_head_no_truncate BEFORE TRUNCATE ON audit_chain_head
FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();

-- The first entry that does not verify: wrong seq, prev_hash not the previous entry's hash, or a
-- hash that does not match the content; also a chain head that points past the last entry
-- (entries removed from the end). Returns no row when the whole trail verifies.
CREATE FUNCTION audit_first_broken() RETURNS TABLE (entry_id bigint, chain text, seq integer, problem text)
LANGUAGE sql STABLE AS $$
  WITH ordered AS (
    SELECT e.id, e.chain, e.seq, e.prev_hash, e.hash,
           audit_hash(e.prev_hash, audit_canonical(e)) AS recomputed,
           lag(e.hash) OVER w AS expected_prev,
           lag(e.seq) OVER w AS previous_seq
    FROM audit_entry e
    WINDOW w AS (PARTITION BY e.chain ORDER BY e.seq)
  ), broken AS (
    SELECT id, chain, seq,
      CASE
        WHEN seq <> coalesce(previous_seq, 0) + 1 THEN 'sequence gap before this entry'
        WHEN prev_hash <> coalesce(expected_prev, repeat('0', 64)) THEN 'previous hash does not match'
        WHEN hash <> recomputed THEN 'content does not match its hash'
      END AS problem
    FROM ordered
  ), tails AS (
    SELECT last.id, h.chain, h.seq, 'entries missing after this one'::text AS problem
    FROM audit_chain_head h
    LEFT JOIN LATERAL (SELECT e.id, e.seq, e.hash FROM audit_entry e WHERE e.chain = h.chain ORDER BY e.seq DESC LIMIT 1) last ON true
    WHERE last.seq IS DISTINCT FROM h.seq OR last.hash IS DISTINCT FROM h.hash
  )
  SELECT id, chain, seq, problem FROM broken WHERE problem IS NOT NULL
  UNION ALL
  SELECT id, chain, seq, problem FROM tails
  ORDER BY 1 NULLS LAST
  LIMIT 1
$$;

-- ---------------------------------------------------------------------------------------------
-- Plans: an approved plan and its items are frozen (P1).
-- ---------------------------------------------------------------------------------------------
-- The plan row is read FOR SHARE: an approval (an UPDATE of that row) waits until an item change
-- in flight commits, and then sees the change when it re-hashes the items; an item change racing
-- an approval in flight waits for it and then sees the plan approved. Without the lock an item
-- edited in a still-open transaction could commit after the approval and be frozen unreviewed.
CREATE FUNCTION plan_item_refuse_when_frozen() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  v_plan uuid;
  v_status "PlanStatus";
BEGIN
  FOREACH v_plan IN ARRAY ARRAY[
    CASE WHEN TG_OP <> 'INSERT' THEN OLD.plan_id END,
    CASE WHEN TG_OP <> 'DELETE' THEN NEW.plan_id END
  ] LOOP
    CONTINUE WHEN v_plan IS NULL;
    SELECT p.status INTO v_status FROM plan p WHERE p.id = v_plan FOR SHARE;
    IF v_status = 'approved' THEN
      RAISE EXCEPTION 'plan % is approved and frozen: % on its items refused', v_plan, TG_OP USING ERRCODE = 'EL001';
    END IF;
  END LOOP;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;

CREATE TRIGGER plan_item_frozen BEFORE INSERT OR UPDATE OR DELETE ON plan_item
FOR EACH ROW EXECUTE FUNCTION plan_item_refuse_when_frozen();

CREATE FUNCTION plan_refuse_when_frozen() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status = 'approved' THEN
    RAISE EXCEPTION 'plan % is approved and frozen: % refused', OLD.id, TG_OP USING ERRCODE = 'EL001';
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;

CREATE TRIGGER plan_frozen BEFORE UPDATE OR DELETE ON plan
FOR EACH ROW EXECUTE FUNCTION plan_refuse_when_frozen();

-- ---------------------------------------------------------------------------------------------
-- Effects: the state pairs of RULES.md (S7) and "done needs a receipt" (S2), enforced a second time
-- under the application's own check, so no code path can write an impossible state.
-- ---------------------------------------------------------------------------------------------
CREATE FUNCTION effect_guard_transition() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.state = 'done' AND (NEW.receipt IS NULL OR NEW.receipt = '') THEN
    RAISE EXCEPTION 'effect %#% cannot be done without a receipt', NEW.key, NEW.epoch USING ERRCODE = 'EL002';
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.state <> 'pending' THEN
      RAISE EXCEPTION 'a new effect starts pending, not %', NEW.state USING ERRCODE = 'EL002';
    END IF;
    RETURN NEW;
  END IF;
  IF NEW.key <> OLD.key OR NEW.epoch <> OLD.epoch THEN
    RAISE EXCEPTION 'the key and epoch of an effect never change' USING ERRCODE = 'EL002';
  END IF;
  IF NEW.state = OLD.state THEN
    -- A held claim (pending, in flight) never becomes claimable again by a flag: that would let a
    -- second claimer win the same epoch (S1). Only a transition to pending or a new epoch sets it.
    IF NEW.state = 'pending' AND NEW.awaiting_claim AND NOT OLD.awaiting_claim THEN
      RAISE EXCEPTION 'effect %#% is held by a claim: it cannot be made claimable again', NEW.key, NEW.epoch
        USING ERRCODE = 'EL002';
    END IF;
    RETURN NEW;
  END IF;
  IF NOT (
       (OLD.state = 'failed'  AND NEW.state = 'pending')
    OR (OLD.state = 'pending' AND NEW.state IN ('done', 'failed', 'stuck', 'unknown', 'revoked'))
    OR (OLD.state = 'unknown' AND NEW.state IN ('done', 'pending', 'revoked'))
    OR (OLD.state IN ('done', 'stuck') AND NEW.state = 'revoked')
  ) THEN
    RAISE EXCEPTION 'transition % -> % refused for effect %#%', OLD.state, NEW.state, NEW.key, NEW.epoch
      USING ERRCODE = 'EL002';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER effect_transition_guard BEFORE INSERT OR UPDATE ON effect
FOR EACH ROW EXECUTE FUNCTION effect_guard_transition();

-- The provider idempotency key for (key, epoch) (R2): stable across processes and releases.
CREATE FUNCTION ledger_idempotency_key(p_key text, p_epoch integer) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT 'el1-' || left(encode(sha256(convert_to(p_key || E'\n' || p_epoch::text, 'UTF8')), 'hex'), 40)
$$;

-- ---------------------------------------------------------------------------------------------
-- Claim (S1, S3, E1): one round trip, one transaction, no lock held across a provider call.
-- Of any number of concurrent claimers exactly one wins: the INSERT ... ON CONFLICT DO NOTHING on
-- (key, epoch) for a new epoch, or the conditional UPDATE of a failed / awaiting-claim row (the row
-- lock makes every other updater re-check the state and find it taken). Losers get the current
-- state and write nothing. Callers (lib/ledger/commands/claim.ts) derive the key and authorize.
-- ---------------------------------------------------------------------------------------------
CREATE FUNCTION ledger_claim(
  p_key text, p_tool text, p_action text, p_record_id text, p_target text, p_target_type "TargetType",
  p_trigger_id text, p_run_id uuid, p_actor_kind "ActorKind", p_actor_id text, p_actor_label text,
  p_lease_seconds integer, p_request jsonb
) RETURNS TABLE (
  claimed boolean, epoch integer, state "EffectState", attempt_id uuid, idempotency_key text,
  changed_by text, changed_at timestamptz, effect_id bigint
)
LANGUAGE plpgsql AS $$
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

-- ---------------------------------------------------------------------------------------------
-- Transition (S2-S7): lock the effect row, check its state is one the caller may move from (the
-- caller passes the allowed sources from lib/ledger/transitions.ts), then write the change, the
-- transition row and the audit entry together. A refusal changes nothing but is itself audited on
-- the subject's "refused:" chain (A4), so the subject's own chain head does not move.
-- ---------------------------------------------------------------------------------------------
CREATE FUNCTION ledger_transition(
  p_key text, p_epoch integer, p_to "EffectState", p_allowed_from "EffectState"[],
  p_actor_kind "ActorKind", p_actor_id text, p_actor_label text, p_actor_role text,
  p_action text, p_reason text, p_receipt text, p_evidence jsonb, p_attempt_id uuid,
  p_request jsonb
) RETURNS TABLE (
  ok boolean, epoch integer, from_state "EffectState", state "EffectState",
  changed_by text, changed_at timestamptz, receipt text, run_id uuid, problem text
)
LANGUAGE plpgsql AS $$
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

-- ---------------------------------------------------------------------------------------------
-- Epoch bump (E1-E3): only done, revoked or stuck can be superseded; pending and unknown block it.
-- The head row lock serializes bumps; the new epoch starts pending and awaiting its claim, and
-- since the old epoch's row already exists, no racing claim can ever win on the old epoch.
-- ---------------------------------------------------------------------------------------------
CREATE FUNCTION ledger_bump(
  p_key text, p_expected_epoch integer,
  p_actor_kind "ActorKind", p_actor_id text, p_actor_label text, p_actor_role text,
  p_reason text, p_detail jsonb, p_request jsonb
) RETURNS TABLE (ok boolean, epoch integer, from_state "EffectState", state "EffectState", problem text)
LANGUAGE plpgsql AS $$
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

-- Functions run as their caller (not SECURITY DEFINER): the app role's own grants apply.
GRANT EXECUTE ON FUNCTION ledger_claim, ledger_transition, ledger_bump, ledger_idempotency_key,
  audit_first_broken, audit_canonical, audit_hash TO ledger_app;
