-- CreateTable
CREATE TABLE "role_grant" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "role" "Role" NOT NULL,
    "workflow" TEXT,
    "granted_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "role_grant_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "role_grant_user_id_idx" ON "role_grant"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "role_grant_user_id_role_workflow_key" ON "role_grant"("user_id", "role", "workflow");

-- AddForeignKey
ALTER TABLE "role_grant" ADD CONSTRAINT "role_grant_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "app_user"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- prisma/sql/functions/role_grant_follow_user_role.sql (new function)
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

CREATE TRIGGER app_user_role_grant
  AFTER INSERT OR UPDATE OF role ON "app_user"
  FOR EACH ROW EXECUTE FUNCTION role_grant_follow_user_role();

-- Everyone's role so far held on every workflow: it becomes an all-workflows grant.
INSERT INTO "role_grant" ("id", "user_id", "role", "workflow")
SELECT gen_random_uuid(), u."id", u."role", NULL FROM "app_user" u;
