// Whether a run's pages may be shown to this viewer: the run exists and its workflow is in their
// scope (Z1). A malformed id is not a run. The per-run pages ask this on the server before they
// render, so a missing, malformed or out-of-scope run answers 404 itself, all three alike.
import type { Db } from '@/lib/db/client.ts';
import { inScope, type WorkflowScope } from '@/lib/auth/grants.ts';
import { isUuid } from '@/lib/uuid.ts';

export interface RunInScope {
  id: string;
  workflow: string;
}

export async function runInScope(db: Db, runId: string, scope: WorkflowScope): Promise<RunInScope | null> {
  if (!isUuid(runId)) return null;
  const run = await db.run.findUnique({ where: { id: runId }, select: { id: true, workflow: true } });
  return run && inScope(scope, run.workflow) ? run : null;
}
