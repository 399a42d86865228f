// The agent API's route modules, and the console's views, dispatched in-process: a real web Request
// goes to the same exported handler `next start` would run for its path. The production server
// (web-server.ts) serves /api/v1 and /api/console/views through here rather than through Next's
// request pipeline, which cost more per request than the ledger's own work (docs/BENCHMARKS.md); so
// do the API tests (routeFetch), the SDK-over-HTTP benchmark's node:http server and the proof.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_BODY_BYTES } from '@/lib/api/request-body.ts';
import { answerText } from '@/lib/api/handler.ts';
import { problem } from '@/lib/api/problem.ts';
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
import * as treeHead from '@/app/api/v1/audit/tree/head/route.ts';
import * as treeInclusion from '@/app/api/v1/audit/tree/inclusion/[size]/[entryId]/route.ts';
import * as treeConsistency from '@/app/api/v1/audit/tree/consistency/[from]/[to]/route.ts';
import * as treeCosignature from '@/app/api/v1/audit/tree/cosignature/route.ts';
import * as docs from '@/app/api/v1/docs/route.ts';
import * as manage from '@/app/api/v1/manage/[...path]/route.ts';
import * as runsView from '@/app/api/console/views/runs/route.ts';
import * as runView from '@/app/api/console/views/run/[runId]/route.ts';
import * as planView from '@/app/api/console/views/plan/[runId]/route.ts';
import * as replayView from '@/app/api/console/views/replay/[runId]/route.ts';
import * as timelineView from '@/app/api/console/views/timeline/[runId]/route.ts';
import * as supportView from '@/app/api/console/views/support/route.ts';
import * as auditView from '@/app/api/console/views/audit/route.ts';
import * as meView from '@/app/api/console/views/me/route.ts';

type Handler = (
  request: Request,
  ctx: { params: Promise<Record<string, string>>; body?: Uint8Array },
) => Promise<Response> | Response;
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
  [/^\/api\/v1\/audit\/tree\/head$/, [], treeHead as never],
  [/^\/api\/v1\/audit\/tree\/inclusion\/([^/]+)\/([^/]+)$/, ['size', 'entryId'], treeInclusion as never],
  [/^\/api\/v1\/audit\/tree\/consistency\/([^/]+)\/([^/]+)$/, ['from', 'to'], treeConsistency as never],
  [/^\/api\/v1\/audit\/tree\/cosignature$/, [], treeCosignature as never],
  [/^\/api\/v1\/docs$/, [], docs as never],
  // The management API: one catch-all route whose operations lib/manage/endpoints.ts lists.
  [/^\/api\/v1\/manage\/(.+)$/, ['path'], manage as never],
  // The console's views (docs/ARCHITECTURE.md, "What a page view asks of the server").
  [/^\/api\/console\/views\/runs$/, [], runsView as never],
  [/^\/api\/console\/views\/run\/([^/]+)$/, ['runId'], runView as never],
  [/^\/api\/console\/views\/plan\/([^/]+)$/, ['runId'], planView as never],
  [/^\/api\/console\/views\/replay\/([^/]+)$/, ['runId'], replayView as never],
  [/^\/api\/console\/views\/timeline\/([^/]+)$/, ['runId'], timelineView as never],
  [/^\/api\/console\/views\/support$/, [], supportView as never],
  [/^\/api\/console\/views\/audit$/, [], auditView as never],
  [/^\/api\/console\/views\/me$/, [], meView as never],
];

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** A problem document for what the router itself refuses (no route, no such method). */
function refusal(status: 404 | 405, detail: string, headers: Record<string, string> = {}): Response {
  const body =
    status === 404
      ? problem('not_found', detail)
      : { type: 'about:blank', title: 'Method not allowed', status, detail, code: 'method_not_allowed' };
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store', ...headers },
  });
}

/** The route handler's response for this request, with what Next adds around route handlers: HEAD
 *  answered by GET without a body, OPTIONS listing the methods, 405 naming them, 404 for no route. */
export async function dispatchApi(request: Request, body?: Uint8Array): Promise<Response> {
  const path = new URL(request.url).pathname;
  for (const [pattern, names, mod] of ROUTES) {
    const m = pattern.exec(path);
    if (!m) continue;
    const allowed = METHODS.filter((method) => mod[method]);
    const allow = [...allowed, ...(mod.GET ? ['HEAD'] : []), 'OPTIONS'].join(', ');
    if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: { allow } });
    const handler = mod[request.method === 'HEAD' ? 'GET' : request.method];
    if (!handler) return refusal(405, `${request.method} is not allowed on ${path}; allowed: ${allow}`, { allow });
    let params: Record<string, string>;
    try {
      params = Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)]));
    } catch {
      return refusal(404, `${path}: a path segment is not valid percent-encoding`);
    }
    const response = await handler(request, { params: Promise.resolve(params), body });
    const answer = request.method === 'HEAD' ? new Response(null, response) : response;
    if ((handler as { logsItsAnswers?: boolean }).logsItsAnswers) loggedAnswers.add(answer);
    return answer;
  }
  return refusal(
    404,
    path.startsWith(VIEWS)
      ? `no console view at ${path}`
      : `no API route at ${path}; the routes are listed at /api/v1/docs`,
  );
}

// Answers whose route handler wrote the request's log line itself (lib/api/handler.ts), and the
// node:http responses that carried them: the server in front writes no second line for those.
const loggedAnswers = new WeakSet<Response>();
const loggedResponses = new WeakSet<ServerResponse>();

/** Whether this request's log line was written by the route that answered it. */
export const answerWasLogged = (res: ServerResponse): boolean => loggedResponses.has(res);

const VIEWS = '/api/console/views/';

/** Whether a node:http request is for the agent API or a console view (served by serveApi, not by
 *  the console's Next). */
export function isApiPath(url: string | undefined): boolean {
  return (
    url !== undefined &&
    (url === '/api/v1' || url.startsWith('/api/v1/') || url.startsWith('/api/v1?') || url.startsWith(VIEWS))
  );
}

// A bearer credential, as lib/api/auth.ts reads the Authorization header.
const BEARER = /^Bearer\s+\S+\s*$/i;

/**
 * Serves one agent API request from node:http: the body is read up to one byte past the handler's
 * limit (lib/api/request-body.ts refuses it with 413 and a problem document; reading further would
 * only buffer what is refused anyway), handed to the route handler with a web Request for the rest,
 * and the answer written back with `headers` (the console's security headers) under the handler's.
 * A request that carries no bearer credential is not read at all: anyone could otherwise make the
 * server buffer up to the limit per request before being told 401.
 */
export function serveApi(
  req: IncomingMessage,
  res: ServerResponse,
  headers: Record<string, string> = {},
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let overflow = false;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) {
        overflow = true;
        req.off('data', onData);
        req.pause();
        answer().then(resolve, reject);
      }
    };
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    // A body sent without a credential is left unread: the route handler answers as it would (401
    // audited and counted, the failure limit, or 404/405 for no such route), from an empty body and
    // without the Authorization header, so the answer cannot depend on bytes that were never read.
    const sendsBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    const unread = sendsBody && !BEARER.test(req.headers.authorization ?? '');
    const answer = async () => {
      const head = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === 'string') head.set(k, v);
        else if (Array.isArray(v)) for (const item of v) head.append(k, item);
      }
      if (unread) head.delete('authorization');
      // The bytes go to the handler beside the Request rather than through a body stream on it: the
      // handler checks them the same way (lib/api/request-body.ts), with less work per request.
      // Routed by the path alone: the client's Host header (still among the headers) is no part of
      // the URL, since a Host such as "h/api/v1/other#" would move the path the handler sees.
      const request = new Request(`http://api.invalid${req.url ?? '/'}`, {
        method: req.method,
        headers: head,
      });
      const response = await dispatchApi(request, hasBody ? Buffer.concat(chunks) : undefined);
      if (loggedAnswers.has(response)) loggedResponses.add(res);
      // An API route's answer is written from its text, not read back through its body stream.
      const text = answerText(response);
      const payload = text ?? (response.body ? Buffer.from(await response.arrayBuffer()) : undefined);
      const out: Record<string, string> = { ...headers, ...Object.fromEntries(response.headers.entries()) };
      // The rest of an oversized or unread body is not read: the connection cannot be reused after this answer.
      if (overflow || unread) out.connection = 'close';
      res.writeHead(response.status, out);
      res.end(payload);
    };
    res.once('finish', resolve);
    res.once('close', resolve);
    if (unread) {
      answer().then(resolve, reject);
      return;
    }
    req.on('data', onData);
    req.once('error', reject);
    req.once('end', () => {
      if (!overflow) answer().then(resolve, reject);
    });
  });
}
