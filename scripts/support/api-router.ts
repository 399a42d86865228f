// The agent API's route modules dispatched in-process: a real web Request goes to the same exported
// handler `next start` would run for its path (Next's own routing and build are not in the way).
// Used by the API tests (routeFetch), the SDK-over-HTTP benchmark's node:http server and the proof.
import * as runs from '@/app/api/v1/runs/route.ts';
import * as run from '@/app/api/v1/runs/[runId]/route.ts';
import * as plan from '@/app/api/v1/runs/[runId]/plan/route.ts';
import * as replay from '@/app/api/v1/runs/[runId]/replay/route.ts';
import * as claim from '@/app/api/v1/effects/claim/route.ts';
import * as outcome from '@/app/api/v1/effects/outcome/route.ts';
import * as deletion from '@/app/api/v1/effects/deletion/route.ts';
import * as effect from '@/app/api/v1/effects/[key]/route.ts';
import * as attemptResponse from '@/app/api/v1/attempts/[attemptId]/response/route.ts';
import * as openapi from '@/app/api/v1/openapi.json/route.ts';
import * as docs from '@/app/api/v1/docs/route.ts';

type Handler = (request: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response> | Response;
const ROUTES: [RegExp, string[], Record<string, Handler>][] = [
  [/^\/api\/v1\/runs$/, [], runs as never],
  [/^\/api\/v1\/runs\/([^/]+)$/, ['runId'], run as never],
  [/^\/api\/v1\/runs\/([^/]+)\/plan$/, ['runId'], plan as never],
  [/^\/api\/v1\/runs\/([^/]+)\/replay$/, ['runId'], replay as never],
  [/^\/api\/v1\/effects\/claim$/, [], claim as never],
  [/^\/api\/v1\/effects\/outcome$/, [], outcome as never],
  [/^\/api\/v1\/effects\/deletion$/, [], deletion as never],
  [/^\/api\/v1\/effects\/([^/]+)$/, ['key'], effect as never],
  [/^\/api\/v1\/attempts\/([^/]+)\/response$/, ['attemptId'], attemptResponse as never],
  [/^\/api\/v1\/openapi\.json$/, [], openapi as never],
  [/^\/api\/v1\/docs$/, [], docs as never],
];

/** The route handler's response for this request: 404 for an unknown path, 405 for a method it lacks. */
export async function dispatchApi(request: Request): Promise<Response> {
  const path = new URL(request.url).pathname;
  for (const [pattern, names, mod] of ROUTES) {
    const m = pattern.exec(path);
    if (!m) continue;
    const handler = mod[request.method];
    if (!handler) return new Response(null, { status: 405 });
    const params = Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)]));
    return handler(request, { params: Promise.resolve(params) });
  }
  return new Response(null, { status: 404 });
}
