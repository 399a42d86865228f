-- prisma/sql/functions/audit_jcs_number.sql (changed: body)
-- A JSON number as RFC 8785 writes it: the IEEE double nearest to it, printed as ECMAScript's
-- Number::toString does (JSON.stringify). Integers of magnitude below 2^53 are exact and print as
-- digits. Anything else is read as a float8 (float8in rounds to nearest, ties to even, as
-- ECMAScript reads a number) and printed by float8out, whose text (with extra_float_digits >= 1,
-- PostgreSQL's default) reads back to the same double: its digits are then laid out as ECMAScript
-- lays them out ("1.5e-7", "1e+21", "1152921504606847000"), never through arithmetic on the value.
-- float8out's digits are the shortest that round-trip strictly inside the double's rounding
-- interval. ECMAScript also accepts a number on the interval's edge when ties round to this double:
-- 1e23 is exactly halfway between two doubles and reads as the even one, which float8out prints as
-- 9.999999999999999e+22. Such an edge has few digits only for magnitudes of 2^53 and above (below,
-- the edges are binary fractions with more digits than the double needs), so only there is each
-- shorter prefix of the digits, rounded down and up, read back as a float8 to find the shortest.
-- A magnitude too small for a double reads as 0, as in ECMAScript; one too large has no JSON form
-- and raises PostgreSQL's out-of-range error.
CREATE OR REPLACE FUNCTION audit_jcs_number(n numeric) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  x float8;
  s text;
  neg boolean;
  mant text;
  ex integer := 0;
  digits text;
  pos integer;
  k integer;
  e integer;
  shorter text;
  up text;
BEGIN
  IF n = trunc(n) AND abs(n) < 9007199254740992 THEN
    RETURN trunc(n)::bigint::text;
  END IF;
  IF abs(n) < 1e-300 THEN
    -- Only here can the cast underflow; PostgreSQL refuses what ECMAScript reads as zero.
    BEGIN
      x := n::float8;
    EXCEPTION WHEN numeric_value_out_of_range THEN
      RETURN '0';
    END;
  ELSE
    x := n::float8;
  END IF;
  IF current_setting('extra_float_digits')::integer < 1 THEN
    PERFORM set_config('extra_float_digits', '1', true);
  END IF;
  s := x::text;
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
  IF k > 1 AND abs(x) >= 9007199254740992 THEN
    FOR j IN 1..k - 1 LOOP
      shorter := left(digits, j);
      IF ('0.' || shorter || 'e' || pos)::float8 = abs(x) THEN
        digits := rtrim(shorter, '0');
        EXIT;
      END IF;
      up := (shorter::numeric + 1)::text; -- "999" + 1 carries into one more place
      up := '0.' || up || 'e' || (pos + length(up) - j);
      -- Rounded up past the largest double, it has no float8 (and cannot be this one).
      IF up::numeric <= 1.7976931348623157e308 THEN
        IF up::float8 = abs(x) THEN
          pos := split_part(up, 'e', 2)::integer;
          digits := rtrim(split_part(substr(up, 3), 'e', 1), '0');
          EXIT;
        END IF;
      END IF;
    END LOOP;
    k := length(digits);
  END IF;
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
