-- An approved bump request is marked executed once its bumps ran; a worker's sweep resumes one whose
-- bumps a crash interrupted (lib/approvals/resume-bumps.ts). Requests approved before this column
-- existed ran their bumps when they were approved: they count as executed then, so the sweep does
-- not run them again.
ALTER TABLE "approval_request" ADD COLUMN "executed_at" TIMESTAMPTZ(6);
UPDATE "approval_request" SET "executed_at" = "decided_at" WHERE "status" = 'approved';
