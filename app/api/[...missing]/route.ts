// An API path nothing serves answers 404 problem+json, not the console's not-found page (whose
// catch-all would otherwise send an agent to the sign-in page).
import { problem, problemResponse } from '@/lib/api/problem.ts';

export const dynamic = 'force-dynamic';

function missing(req: Request): Response {
  return problemResponse(problem('not_found', `no API route at ${new URL(req.url).pathname}`));
}

export { missing as GET, missing as POST, missing as PUT, missing as PATCH, missing as DELETE };
