-- An approved plan is frozen (P1): no update or delete of it, whoever asks. EL001.
CREATE OR REPLACE FUNCTION plan_refuse_when_frozen() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status = 'approved' THEN
    RAISE EXCEPTION 'plan % is approved and frozen: % refused', OLD.id, TG_OP USING ERRCODE = 'EL001';
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;
