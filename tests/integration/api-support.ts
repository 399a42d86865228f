// Shared set-up of the api-*, sdk-* and sandbox-* tests: a test database wired into the API's db seam,
// runtime keys, and an in-process fetch that dispatches real Requests to the route modules.
import { setDb } from '../../lib/api/db.ts';
import type { Db } from '../../lib/db/client.ts';
import { createRuntimeKey } from '../../lib/runtime-keys/index.ts';
import * as runs from '../../app/api/v1/runs/route.ts';
import * as run from '../../app/api/v1/runs/[runId]/route.ts';
import * as plan from '../../app/api/v1/runs/[runId]/plan/route.ts';
import * as replay from '../../app/api/v1/runs/[runId]/replay/route.ts';
import * as claim from '../../app/api/v1/effects/claim/route.ts';
import * as outcome from '../../app/api/v1/effects/outcome/route.ts';
import * as deletion from '../../app/api/v1/effects/deletion/route.ts';
import * as attemptResponse from '../../app/api/v1/attempts/[attemptId]/response/route.ts';
import * as openapi from '../../app/api/v1/openapi.json/route.ts';
import * as docs from '../../app/api/v1/docs/route.ts';

export const BASE = 'http://ledger.test';
const system = { kind: 'system', id: 'test', label: 'test setup' } as const;

export function useApiDb(db: Db): void {
  setDb(db);
}

export async function makeKey(db: Db, workflows: string[] = ['*'], name = `rt-${Math.random().toString(36).slice(2, 8)}`) {
  return createRuntimeKey({ db, actor: system }, { name, workflows });
}

type Handler = (request: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response> | Response;
const ROUTES: [RegExp, string[], Record<string, Handler>][] = [
  [/^\/api\/v1\/runs$/, [], runs as never],
  [/^\/api\/v1\/runs\/([^/]+)$/, ['runId'], run as never],
  [/^\/api\/v1\/runs\/([^/]+)\/plan$/, ['runId'], plan as never],
  [/^\/api\/v1\/runs\/([^/]+)\/replay$/, ['runId'], replay as never],
  [/^\/api\/v1\/effects\/claim$/, [], claim as never],
  [/^\/api\/v1\/effects\/outcome$/, [], outcome as never],
  [/^\/api\/v1\/effects\/deletion$/, [], deletion as never],
  [/^\/api\/v1\/attempts\/([^/]+)\/response$/, ['attemptId'], attemptResponse as never],
  [/^\/api\/v1\/openapi\.json$/, [], openapi as never],
  [/^\/api\/v1\/docs$/, [], docs as never],
];

/** A fetch that serves the route modules in-process (real Request and Response objects). */
export const routeFetch: typeof fetch = async (input, init) => {
  const request = new Request(input as string, init);
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
};

export function post(path: string, body: unknown, options: { token?: string; idempotencyKey?: string; raw?: string; headers?: Record<string, string> } = {}): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  return routeFetch(`${BASE}/api/v1${path}`, { method: 'POST', headers, body: options.raw ?? JSON.stringify(body) });
}

export function get(path: string, token?: string): Promise<Response> {
  return routeFetch(`${BASE}/api/v1${path}`, { method: 'GET', headers: token ? { authorization: `Bearer ${token}` } : {} });
}
