-- A user's own role (app_user.role, what user creation and sign-in write) is an all-workflows grant
-- (Z1): created with the user, and swapped when that role changes, so every way of creating or
-- changing a person keeps their grants in step without knowing about them. Grants per workflow are
-- added and removed in lib/auth/grants.ts and are left alone here.
CREATE OR REPLACE FUNCTION role_grant_follow_user_role() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF NEW.role = OLD.role THEN
      RETURN NEW;
    END IF;
    DELETE FROM role_grant WHERE user_id = NEW.id AND role = OLD.role AND workflow IS NULL;
  END IF;
  INSERT INTO role_grant (id, user_id, role, workflow)
  SELECT gen_random_uuid(), NEW.id, NEW.role, NULL
  WHERE NOT EXISTS (SELECT 1 FROM role_grant WHERE user_id = NEW.id AND role = NEW.role AND workflow IS NULL);
  RETURN NEW;
END
$$;
