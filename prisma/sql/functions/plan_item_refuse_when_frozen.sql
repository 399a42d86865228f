-- An approved plan's items are frozen (P1), whoever asks. EL001.
-- The plan row is read FOR SHARE: an approval (an UPDATE of that row) waits until an item change
-- in flight commits, and then sees the change when it re-hashes the items; an item change racing
-- an approval in flight waits for it and then sees the plan approved. Without the lock an item
-- edited in a still-open transaction could commit after the approval and be frozen unreviewed.
CREATE OR REPLACE FUNCTION plan_item_refuse_when_frozen() RETURNS trigger
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
