-- A JSON number as RFC 8785 writes it: the IEEE double nearest to it, printed as ECMAScript's
-- Number.prototype.toString does. Integers of magnitude below 2^53 are exact and print as digits.
-- Anything else goes through float8, whose text (with extra_float_digits >= 1, PostgreSQL's default)
-- is the shortest that reads back to the same double, the digits ECMAScript chooses too; only the
-- layout differs (PostgreSQL "1.5e-07", ECMAScript "1.5e-7"; exponent from 1e21 and below 1e-6).
CREATE OR REPLACE FUNCTION audit_jcs_number(n numeric) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  s text;
  neg boolean;
  mant text;
  ex integer := 0;
  digits text;
  pos integer;
  k integer;
  e integer;
BEGIN
  IF n = trunc(n) AND abs(n) < 9007199254740992 THEN
    RETURN trunc(n)::bigint::text;
  END IF;
  IF current_setting('extra_float_digits')::integer < 1 THEN
    PERFORM set_config('extra_float_digits', '1', true);
  END IF;
  s := (n::float8)::text;
  neg := left(s, 1) = '-';
  IF neg THEN s := substr(s, 2); END IF;
  IF position('e' IN s) > 0 THEN
    ex := split_part(s, 'e', 2)::integer;
    mant := split_part(s, 'e', 1);
  ELSE
    mant := s;
  END IF;
  -- value = 0.<digits> x 10^pos
  digits := replace(mant, '.', '');
  pos := length(split_part(mant, '.', 1)) + ex;
  WHILE left(digits, 1) = '0' AND length(digits) > 1 LOOP
    digits := substr(digits, 2);
    pos := pos - 1;
  END LOOP;
  digits := rtrim(digits, '0');
  IF digits = '' THEN RETURN '0'; END IF;
  k := length(digits);
  IF k <= pos AND pos <= 21 THEN
    s := digits || repeat('0', pos - k);
  ELSIF 0 < pos AND pos <= 21 THEN
    s := left(digits, pos) || '.' || substr(digits, pos + 1);
  ELSIF -6 < pos AND pos <= 0 THEN
    s := '0.' || repeat('0', -pos) || digits;
  ELSE
    e := pos - 1;
    s := left(digits, 1) || CASE WHEN k > 1 THEN '.' || substr(digits, 2) ELSE '' END
         || 'e' || CASE WHEN e >= 0 THEN '+' ELSE '-' END || abs(e)::text;
  END IF;
  RETURN CASE WHEN neg THEN '-' || s ELSE s END;
END
$$;
