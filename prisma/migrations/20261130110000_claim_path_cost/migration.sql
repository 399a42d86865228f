-- A cheaper claim path (issue 2's claim benchmark), with the same rules:
--
-- 1. The effect guard (S2, S7) runs its PL/pgSQL body only when a row could break a rule. The WHEN
--    clauses are evaluated by the executor without a function call; before, every insert and every
--    update of an effect (each claim, each receipt) paid for a PL/pgSQL call.
-- 2. The audit chain trigger (A2) no longer SETs search_path on every call (a configuration save and
--    restore per audit entry). It names every table and function with its schema instead, which is
--    what keeps a SECURITY DEFINER body from being pointed at another object (a temporary table of
--    the same name, for instance). Only the owner may create objects in public (the default since
--    PostgreSQL 15; stated here so it also holds on servers upgraded from older versions).

REVOKE CREATE ON SCHEMA public FROM PUBLIC;

DROP TRIGGER effect_transition_guard ON effect;

-- A new effect starts pending (and so can never be done without a receipt).
CREATE TRIGGER effect_insert_guard BEFORE INSERT ON effect
FOR EACH ROW WHEN (NEW.state <> 'pending')
EXECUTE FUNCTION effect_guard_transition();

-- Exactly the cases effect_guard_transition() refuses or checks: a state change, a key or epoch
-- change, done without a receipt, a held claim made claimable again.
CREATE TRIGGER effect_transition_guard BEFORE UPDATE ON effect
FOR EACH ROW WHEN (
     NEW.state IS DISTINCT FROM OLD.state
  OR NEW.key IS DISTINCT FROM OLD.key
  OR NEW.epoch IS DISTINCT FROM OLD.epoch
  OR (NEW.state = 'done' AND (NEW.receipt IS NULL OR NEW.receipt = ''))
  OR (NEW.state = 'pending' AND NEW.awaiting_claim AND NOT OLD.awaiting_claim)
)
EXECUTE FUNCTION effect_guard_transition();

-- 3. An append to an existing chain (every outcome after a claim) computes its hash once: the head is
--    looked up first. Before, the new-chain insert was tried first, so such appends hashed twice.
CREATE OR REPLACE FUNCTION audit_chain_append() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
  v_seq integer;
  v_prev text;
  v_created text;
BEGIN
  NEW.at := clock_timestamp();
  FOR attempt IN 1..2 LOOP
    -- Existing chain: the head row lock orders appends to this chain only.
    SELECT h.seq, h.hash INTO v_seq, v_prev FROM public.audit_chain_head h WHERE h.chain = NEW.chain FOR UPDATE;
    IF FOUND THEN
      NEW.seq := v_seq + 1;
      NEW.prev_hash := v_prev;
      NEW.hash := public.audit_hash(v_prev, public.audit_canonical(NEW));
      UPDATE public.audit_chain_head SET seq = NEW.seq, hash = NEW.hash WHERE chain = NEW.chain;
      RETURN NEW;
    END IF;
    -- A new chain (every first claim of a key): one write, the head is born final.
    NEW.seq := 1;
    NEW.prev_hash := repeat('0', 64);
    NEW.hash := public.audit_hash(NEW.prev_hash, public.audit_canonical(NEW));
    INSERT INTO public.audit_chain_head (chain, seq, hash) VALUES (NEW.chain, 1, NEW.hash)
    ON CONFLICT (chain) DO NOTHING
    RETURNING chain INTO v_created;
    IF v_created IS NOT NULL THEN
      RETURN NEW;
    END IF;
    -- Another transaction created this chain between the look-up and the insert: append after it.
  END LOOP;
  RAISE EXCEPTION 'audit chain % could not be extended', NEW.chain;
END
$$;
