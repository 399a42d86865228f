// Readiness: 200 when the database answers and has every migration of this build, else 503 with a
// problem document naming the failed check (lib/ops/probes.ts).
import { problem, problemResponse } from '@/lib/api/problem.ts';
import { readiness } from '@/lib/ops/probes.ts';

export const dynamic = 'force-dynamic';

export async function GET(): Promise<Response> {
  const r = await readiness();
  if (r.ready)
    return Response.json({ status: 'ready', checks: r.checks }, { headers: { 'cache-control': 'no-store' } });
  return problemResponse(problem('unavailable', 'not ready: see checks', { checks: r.checks }));
}
