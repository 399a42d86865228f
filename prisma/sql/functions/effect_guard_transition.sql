-- Effects: the state pairs of RULES.md (S7) and "done needs a receipt" (S2), enforced a second time
-- under the application's own check, so no code path can write an impossible state. EL002.
-- Its triggers (effect_insert_guard, effect_transition_guard) call it only when a row could break a
-- rule: their WHEN clauses are evaluated by the executor without a function call, so a claim or a
-- receipt does not pay for a PL/pgSQL call (20261130110000_claim_path_cost).
CREATE OR REPLACE FUNCTION effect_guard_transition() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.state = 'done' AND (NEW.receipt IS NULL OR NEW.receipt = '') THEN
    RAISE EXCEPTION 'effect %#% cannot be done without a receipt', NEW.key, NEW.epoch USING ERRCODE = 'EL002';
  END IF;
  IF TG_OP = 'INSERT' THEN
    -- A new effect starts pending (a claim), or revoked: an operator excluded a planned target
    -- before anything was sent to it (S5: (none, planned) -> revoked).
    IF NEW.state NOT IN ('pending', 'revoked') THEN
      RAISE EXCEPTION 'a new effect starts pending or revoked, not %', NEW.state USING ERRCODE = 'EL002';
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
    OR (OLD.state IN ('done', 'failed', 'stuck') AND NEW.state = 'revoked')
  ) THEN
    RAISE EXCEPTION 'transition % -> % refused for effect %#%', OLD.state, NEW.state, NEW.key, NEW.epoch
      USING ERRCODE = 'EL002';
  END IF;
  RETURN NEW;
END
$$;
