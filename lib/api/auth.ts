// Bearer runtime-key authentication for /api/v1. A missing, malformed, unknown or revoked key is a
// 401, and the refusal is audited (A4) with where the request came from.
import { randomUUID } from 'node:crypto';
import { auditRefusal } from '../audit/append.ts';
import type { ApiDoorAction } from '../audit/actions.ts';
import type { Db } from '../db/client.ts';
import type { Actor, RequestMeta } from '../ledger/actor.ts';
import { LedgerError } from '../ledger/errors.ts';
import { verifyRuntimeKey } from '../runtime-keys/index.ts';

export function requestMeta(request: Request): RequestMeta {
  const forwarded = request.headers.get('x-forwarded-for')?.split(',')[0]?.trim();
  const requestId = request.headers.get('x-request-id')?.slice(0, 128) || randomUUID();
  return {
    ip: forwarded || request.headers.get('x-real-ip') || null,
    userAgent: request.headers.get('user-agent')?.slice(0, 512) ?? null,
    requestId,
  };
}

export async function authenticate(
  db: Db,
  request: Request,
  meta: RequestMeta,
  action: ApiDoorAction,
): Promise<Extract<Actor, { kind: 'runtime' }>> {
  const header = request.headers.get('authorization');
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  const result = match
    ? await verifyRuntimeKey(db, match[1]!)
    : ({ ok: false, why: 'no bearer runtime key in the Authorization header', prefix: null } as const);
  if (result.ok) return result.actor;
  const path = new URL(request.url).pathname;
  const anonymous: Actor = {
    kind: 'runtime',
    id: result.prefix ? `prefix:${result.prefix}` : 'anonymous',
    label: 'unauthenticated caller',
    workflows: [],
  };
  await auditRefusal(db, {
    chain: 'api:auth',
    actor: anonymous,
    action,
    subjectType: 'api',
    subjectId: `${request.method} ${path}`,
    why: result.why,
    request: meta,
  });
  throw new LedgerError('unauthenticated', `${result.why}: send "Authorization: Bearer elk_..." with a runtime key`);
}
