// The server's part of a run's pages (run, plan, replay): the session (sign in and come back here),
// then the run itself, which must exist and be in the viewer's scope, before anything is rendered:
// a missing, malformed or out-of-scope run id answers HTTP 404 with the console's not-found page.
import { notFound } from 'next/navigation';
import { requireViewer } from '@/lib/auth/page.ts';
import { runInScope } from '@/lib/read-models/run-in-scope.ts';

export async function requireRun(params: Promise<{ runId: string }>, page = ''): Promise<string> {
  const { runId } = await params;
  const { db, scope } = await requireViewer('console.read', `/runs/${encodeURIComponent(runId)}${page}`);
  if (!(await runInScope(db, runId, scope))) notFound();
  return runId;
}
