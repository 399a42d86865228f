-- Assigns seq, prev_hash, hash, the canonical form version and the database time (A2). Runs as the owner (SECURITY DEFINER) so the
-- app can extend a chain without being able to write chain heads itself. Locking only the chain's
-- head row keeps unrelated chains (different effect keys) from serializing on each other.
-- No SET search_path (a configuration save and restore per audit entry): every table and function is
-- named with its schema instead, which is what keeps a SECURITY DEFINER body from being pointed at
-- another object (a temporary table of the same name, for instance); only the owner may create
-- objects in public (20261130110000_claim_path_cost).
-- An append to an existing chain (every outcome after a claim) looks the head up first and computes
-- its hash once. An entry written with seq = 1 is a hint that it starts a new chain (a claim of a key
-- never claimed before), so the chain head is inserted first and the look-up that would find nothing
-- is skipped. The trigger still decides: if the chain exists, the insert does nothing and the entry
-- is appended after the head. Every other caller writes seq = 0.
CREATE OR REPLACE FUNCTION audit_chain_append() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
  v_seq integer;
  v_prev text;
  v_created text;
  v_expect_new boolean := NEW.seq = 1;
BEGIN
  NEW.at := clock_timestamp();
  -- Every new entry is hashed over canonical form 2 (RFC 8785), whatever the writer set (docs/AUDIT.md).
  NEW.canon_version := 2;
  FOR attempt IN 1..2 LOOP
    IF NOT v_expect_new THEN
      -- Existing chain: the head row lock orders appends to this chain only.
      SELECT h.seq, h.hash INTO v_seq, v_prev FROM public.audit_chain_head h WHERE h.chain = NEW.chain FOR UPDATE;
      IF FOUND THEN
        NEW.seq := v_seq + 1;
        NEW.prev_hash := v_prev;
        NEW.hash := public.audit_hash(v_prev, public.audit_canonical(NEW));
        UPDATE public.audit_chain_head SET seq = NEW.seq, hash = NEW.hash WHERE chain = NEW.chain;
        RETURN NEW;
      END IF;
    END IF;
    v_expect_new := false;
    -- A new chain: one write, the head is born final.
    NEW.seq := 1;
    NEW.prev_hash := repeat('0', 64);
    NEW.hash := public.audit_hash(NEW.prev_hash, public.audit_canonical(NEW));
    INSERT INTO public.audit_chain_head (chain, seq, hash) VALUES (NEW.chain, 1, NEW.hash)
    ON CONFLICT (chain) DO NOTHING
    RETURNING chain INTO v_created;
    IF v_created IS NOT NULL THEN
      RETURN NEW;
    END IF;
    -- The chain exists (the hint was wrong, or another transaction created it between the look-up
    -- and the insert): append after its head.
  END LOOP;
  RAISE EXCEPTION 'audit chain % could not be extended', NEW.chain;
END
$$;
