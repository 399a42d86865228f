// Errors as HTTP, in one place for the agent API and the console's routes: RFC 9457 problem details
// (application/problem+json). Each body has the standard members (type, title, status, detail) and
// ours: `code` (stable, for programs), `field` (the input at fault) and any details of the refusal.
// Here, low, so every layer may answer with one; the mapping of a thrown value (problemFrom, which
// logs) is in lib/api/problem.ts.
import type { LedgerErrorCode } from './errors.ts';

export type ProblemCode = LedgerErrorCode | 'internal';

/** Status and title of each problem type; the OpenAPI document and the docs page list them from here. */
export const PROBLEM_TYPES: Record<ProblemCode, { status: number; title: string; when: string }> = {
  validation: {
    status: 422,
    title: 'Invalid input',
    when: 'A field is missing, malformed or out of range; `field` names it.',
  },
  unauthenticated: {
    status: 401,
    title: 'Not authenticated',
    when: 'No credentials, or unknown, revoked or expired ones.',
  },
  forbidden: { status: 403, title: 'Forbidden', when: 'The caller may not do this (role, or workflow scope).' },
  not_found: { status: 404, title: 'Not found', when: 'The run, effect, attempt or request does not exist.' },
  conflict: {
    status: 409,
    title: 'Conflict',
    when: 'The state changed, or a request with this Idempotency-Key is running.',
  },
  invalid_transition: {
    status: 409,
    title: 'Transition refused',
    when: 'The transition table does not allow this move.',
  },
  payload_too_large: { status: 413, title: 'Payload too large', when: 'The body is over the size or depth limit.' },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    when: 'The body was sent with a Content-Type other than JSON.',
  },
  rate_limited: { status: 429, title: 'Too many requests', when: 'Slow down; retry after the Retry-After seconds.' },
  unavailable: {
    status: 503,
    title: 'Service unavailable',
    when: 'The database cannot be reached now; nothing was changed; retry after Retry-After.',
  },
  internal: {
    status: 500,
    title: 'Internal error',
    when: 'A bug: the request may or may not have taken effect; retry with the same Idempotency-Key.',
  },
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  field?: string;
  [extension: string]: unknown;
}

/** Seconds a client should wait before retrying an `unavailable` answer. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

export function problemType(code: ProblemCode): string {
  return `/api/v1/docs#problem-${code}`;
}

export function problem(code: ProblemCode, detail: string, extensions: Record<string, unknown> = {}): Problem {
  const { status, title } = PROBLEM_TYPES[code];
  return { type: problemType(code), title, status, detail, code, ...jsonSafe(extensions) };
}

/** The headers a problem answer carries: its media type, and Retry-After where the client should come
 *  back later. */
export function problemHeaders(p: Pick<Problem, 'code'>): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/problem+json', 'cache-control': 'no-store' };
  if (p.code === 'unavailable') headers['retry-after'] = String(UNAVAILABLE_RETRY_AFTER_SECONDS);
  // The same request's earlier attempt is still running: come back soon, with the same key.
  if ((p as { idempotency?: unknown }).idempotency === 'in_progress') headers['retry-after'] = '1';
  return headers;
}

export function problemResponse(p: Problem, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(p), { status: p.status, headers: { ...problemHeaders(p), ...headers } });
}

export function isProblem(body: unknown): body is Problem {
  return typeof body === 'object' && body !== null && typeof (body as Problem).code === 'string' && 'status' in body;
}

/** Dates to ISO strings, bigints to strings: what JSON.stringify would send. */
export function jsonSafe<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))) as T;
}
