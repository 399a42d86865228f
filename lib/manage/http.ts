// The management API's one route handler (app/api/v1/manage/[...path]/route.ts): find the operation
// in the table (./endpoints.ts), authorize the personal access token's person with the console's guard,
// run the console's Decision or read the console's view, and answer JSON or a problem document. Every
// call made with a known token is recorded on that token's audit chain (access_token.use), answered
// or refused; a decision's own change is audited by its command, as from the console.
import { readJson } from '../api/request-body.ts';
import { problem, problemFrom, problemResponse, jsonSafe, type ProblemCode } from '../api/problem.ts';
import { recordAccessTokenUse } from '../auth/access-tokens.ts';
import { runDecision } from '../auth/decision.ts';
import { authorize, userActor } from '../auth/guard.ts';
import { requestInfoFromHeaders, type RequestInfo } from '../auth/request.ts';
import { db } from '../db/client.ts';
import { LedgerError } from '../ledger/errors.ts';
import { componentLogger } from '../ops/log.ts';
import { searchParamsOf } from '../read-models/views/query.ts';
import { findEndpoint } from './endpoints.ts';

const NO_STORE = { 'cache-control': 'no-store' };

function bearerOf(request: Request): string {
  const header = request.headers.get('authorization');
  return (header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : null) ?? '';
}

async function answer(request: Request, info: RequestInfo, path: string, body?: Uint8Array): Promise<Response> {
  let found: ReturnType<typeof findEndpoint>;
  try {
    found = findEndpoint(request.method === 'HEAD' ? 'GET' : request.method, path);
  } catch {
    return problemResponse(problem('not_found', `${path}: a path segment is not valid percent-encoding`));
  }
  if (!found.endpoint) {
    if (found.allowed.length) {
      const allow = found.allowed.join(', ');
      return new Response(
        JSON.stringify({
          type: 'about:blank',
          title: 'Method not allowed',
          status: 405,
          detail: `${request.method} is not allowed on /api/v1${path}; allowed: ${allow}`,
          code: 'method_not_allowed',
        }),
        { status: 405, headers: { 'content-type': 'application/problem+json', allow, ...NO_STORE } },
      );
    }
    return problemResponse(problem('not_found', `no management operation at /api/v1${path}; see /api/v1/docs`));
  }
  const { endpoint, params } = found;
  if (endpoint.method === 'GET') {
    try {
      const g = await authorize(info, endpoint.permission ?? 'console.read', { mutating: false });
      const view = await endpoint.read(g, params, searchParamsOf(new URL(request.url).searchParams), request);
      if (view instanceof Response) return view;
      // Missing, or outside the person's scope: the same answer for both (Z1).
      if (view === null) throw new LedgerError('not_found', `nothing at /api/v1${path} in your workflows`);
      return Response.json(jsonSafe(view), { headers: NO_STORE });
    } catch (error) {
      return problemResponse(problemFrom(error));
    }
  }
  let input: unknown;
  try {
    input = (await readJson(request, body)) ?? {};
  } catch (error) {
    return problemResponse(problemFrom(error));
  }
  const result = await runDecision(info, endpoint.decision, input);
  if (result.ok) return Response.json(jsonSafe(result.data ?? { ok: true }), { headers: NO_STORE });
  const { code, error, field, details } = result;
  return problemResponse(problem(code as ProblemCode, error, { ...(field ? { field } : {}), ...(details ?? {}) }));
}

/** Serves one management API request; `ctx.body` holds the bytes the production front already read. */
export async function serveManage(
  request: Request,
  ctx: { params?: Promise<unknown>; body?: Uint8Array } = {},
): Promise<Response> {
  const path = new URL(request.url).pathname.replace(/^\/api\/v1/, '');
  // Only the bearer token counts here: a console session cookie sent along opens nothing.
  const info: RequestInfo = {
    ...requestInfoFromHeaders(request.headers),
    cookie: null,
    accessToken: { bearer: bearerOf(request) },
  };
  const response = await answer(request, info, path, ctx.body);
  const token = info.accessToken!;
  if (token.tokenId) {
    const actor = token.user
      ? userActor(token.user)
      : ({ kind: 'system', id: 'anonymous', label: 'refused token' } as const);
    try {
      await recordAccessTokenUse(db(), {
        tokenId: token.tokenId,
        actor,
        request: { ip: info.ip, userAgent: info.userAgent, requestId: info.requestId },
        method: request.method,
        path,
        status: response.status,
      });
    } catch (error) {
      // The call's own change is already committed and audited by its command: answer it as it went,
      // and leave the missing use record to the error log.
      componentLogger('api', true).error({ err: error, tokenId: token.tokenId }, 'access token use not recorded');
    }
  }
  return response;
}
