// The one wrapper every /api/v1 route uses: request id, runtime-key auth (401, audited), JSON body
// parsing (422 naming the field; nothing is written for a malformed body, not even an idempotency
// record), Idempotency-Key on POST (Z5), errors mapped to HTTP in one place, responses parsed to
// their documented shape before they leave.
import type { z } from 'zod';
import type { ApiDoorAction } from '../audit/actions.ts';
import type { Db } from '../db/client.ts';
import type { Actor, RequestMeta } from '../ledger/actor.ts';
import { invalid, LedgerError } from '../ledger/errors.ts';
import { parseInput } from '../ledger/validate.ts';
import { authenticate, requestMeta } from './auth.ts';
import { apiDb } from './db.ts';
import { isProblem, jsonSafe, problem, problemFrom, problemHeaders, type Problem } from './problem.ts';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };
import { parseIdempotencyKey, requestHash, withIdempotency } from './idempotency.ts';
import type { OpResult } from './operations.ts';

export const MAX_BODY_BYTES = 64 * 1024 * 1024;

export interface HandlerContext<B, P> {
  db: Db;
  actor: Extract<Actor, { kind: 'runtime' }>;
  meta: RequestMeta;
  /** The same as meta, under the name lib commands and operations read (A1: where, in every audit entry). */
  request: RequestMeta;
  body: B;
  params: P;
}

export interface RouteSpec<S extends z.ZodType | undefined> {
  /** Audit action name for refusals at the door. */
  action: ApiDoorAction;
  /** Request body schema (POST). */
  body?: S;
  /** Response schemas by status: the body is parsed (stripped) to this shape before it leaves. */
  responses?: Record<number, z.ZodType>;
  /** Path parameter schema (validated before anything runs: 422 naming the parameter). */
  params?: z.ZodType;
}

type RouteCtx<P> = { params: Promise<P> };

/** Success bodies are JSON; every 4xx and 5xx body is a problem document (RFC 9457). */
function json(status: number, body: unknown, meta: RequestMeta, extra: Record<string, string> = {}): Response {
  const kind = status >= 400 && isProblem(body) ? problemHeaders(body) : JSON_HEADERS;
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...kind, 'x-request-id': meta.requestId ?? '', ...extra },
  });
}

const answer = (p: Problem): OpResult => ({ status: p.status, body: p });

async function readJson(request: Request): Promise<unknown> {
  const length = Number(request.headers.get('content-length') ?? '0');
  if (length > MAX_BODY_BYTES)
    throw new LedgerError('validation', `body: larger than ${MAX_BODY_BYTES} bytes`, { field: 'body' });
  const text = await request.text();
  if (text.length > MAX_BODY_BYTES)
    throw new LedgerError('validation', `body: larger than ${MAX_BODY_BYTES} bytes`, { field: 'body' });
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalid('body', `body: not valid JSON (${(error as Error).message})`);
  }
}

/** PostgreSQL text cannot hold NUL: refuse it at the door, naming the field, instead of failing deep inside. */
export function findNul(value: unknown, path: string[] = []): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path.join('.') || 'body' : null;
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const hit = findNul(k, [...path, k]) ?? findNul(v, [...path, k]);
      if (hit) return hit;
    }
  }
  return null;
}

function shape(spec: RouteSpec<z.ZodType | undefined>, result: OpResult): OpResult {
  const body = jsonSafe(result.body);
  const schema = spec.responses?.[result.status];
  if (!schema) return { status: result.status, body };
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    console.error('[api] response does not match its schema', result.status, parsed.error.issues.slice(0, 3));
    return answer(problem('internal', 'internal error: response did not match its documented shape'));
  }
  return { status: result.status, body: parsed.data };
}

export function apiRoute<S extends z.ZodType | undefined, P = Record<string, never>>(
  spec: RouteSpec<S>,
  fn: (c: HandlerContext<S extends z.ZodType ? z.output<S> : undefined, P>) => Promise<OpResult>,
) {
  return async (request: Request, ctx?: RouteCtx<P>): Promise<Response> => {
    const meta = requestMeta(request);
    try {
      const db = apiDb();
      const actor = await authenticate(db, request, meta, spec.action);
      const rawParams = (await ctx?.params) ?? {};
      const params = (spec.params ? parseInput(spec.params, rawParams) : rawParams) as P;
      let body: unknown = undefined;
      if (request.method === 'POST') {
        const raw = await readJson(request);
        const nul = findNul(raw);
        if (nul) throw invalid(nul, `${nul}: contains a NUL character`);
        body = spec.body ? parseInput(spec.body, raw === undefined ? {} : raw) : undefined;
        const key = parseIdempotencyKey(request);
        const run = async () => {
          try {
            return shape(spec, await fn({ db, actor, meta, request: meta, body: body as never, params }));
          } catch (error) {
            return answer(problemFrom(error));
          }
        };
        if (key === null) {
          const r = await run();
          return json(r.status, r.body, meta);
        }
        const path = new URL(request.url).pathname;
        const r = await withIdempotency(db, `runtime:${actor.id}`, key, requestHash('POST', path, raw ?? null), run);
        return json(r.status, r.body, meta, r.replayed ? { 'idempotent-replayed': 'true' } : {});
      }
      const r = shape(spec, await fn({ db, actor, meta, request: meta, body: undefined as never, params }));
      return json(r.status, r.body, meta);
    } catch (error) {
      const p = problemFrom(error);
      return json(p.status, p, meta, p.status === 401 ? { 'www-authenticate': 'Bearer realm="effect-ledger"' } : {});
    }
  };
}
