// Bearer runtime-key authentication for /api/v1. A missing, malformed, unknown or revoked key is a
// 401, and the refusal is audited (A4) with where the request came from.
import { randomUUID } from 'node:crypto';
import { auditRefusal } from '../audit/append.ts';
import type { ApiDoorAction } from '../audit/actions.ts';
import { sqlRows, type Db } from '../db/client.ts';
import type { Actor, RequestMeta } from '../core/actor.ts';
import { LedgerError } from '../core/errors.ts';
import {
  checkRuntimeKey,
  hashToken,
  noteRuntimeKeyUse,
  RUNTIME_KEY_COLUMNS,
  runtimeKeyPrefix,
  type RuntimeKeyRow,
  type VerifiedKey,
} from '../runtime-keys/index.ts';
import { runtimeKeyRow } from './runtime-key-lookup.ts';
import { existingRecord, RUNTIME_SCOPE_PREFIX, runtimeScope, type Reservation } from './idempotency.ts';
import { readHeldClaim, type HeldClaimRead } from './held-claim.ts';

type RuntimeActor = Extract<Actor, { kind: 'runtime' }>;

export function requestMeta(request: Request): RequestMeta {
  const forwarded = request.headers.get('x-forwarded-for')?.split(',')[0]?.trim();
  const requestId = request.headers.get('x-request-id')?.slice(0, 128) || randomUUID();
  return {
    ip: forwarded || request.headers.get('x-real-ip') || null,
    userAgent: request.headers.get('user-agent')?.slice(0, 512) ?? null,
    requestId,
  };
}

const NO_TOKEN_WHY = 'no bearer runtime key in the Authorization header';
const NO_TOKEN: VerifiedKey = { ok: false, why: NO_TOKEN_WHY, told: NO_TOKEN_WHY, prefix: null };

function bearerToken(request: Request): string | null {
  const header = request.headers.get('authorization');
  return (header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : null) ?? null;
}

async function refuse(db: Db, request: Request, meta: RequestMeta, action: ApiDoorAction, result: VerifiedKey) {
  if (result.ok) throw new Error('refuse() needs a failed verification');
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
    subjectId: `${request.method} ${new URL(request.url).pathname}`,
    why: result.why,
    request: meta,
  });
  // The audit names the failed check; the caller reads `told`, the same for an unknown prefix and a wrong secret.
  return new LedgerError('unauthenticated', `${result.told}: send "Authorization: Bearer elk_..." with a runtime key`);
}

export async function authenticate(
  db: Db,
  request: Request,
  meta: RequestMeta,
  action: ApiDoorAction,
): Promise<RuntimeActor> {
  const token = bearerToken(request);
  const result = token ? await verify(db, token) : NO_TOKEN;
  if (result.ok) return result.actor;
  throw await refuse(db, request, meta, action, result);
}

/** verifyRuntimeKey's checks, on a row read through the batched lookup (runtime-key-lookup.ts). */
async function verify(db: Db, token: string): Promise<VerifiedKey> {
  const prefix = runtimeKeyPrefix(token);
  const row = prefix ? await runtimeKeyRow(db, prefix) : undefined;
  const result = checkRuntimeKey(row, token);
  if (result.ok) await noteRuntimeKeyUse(db, row!);
  return result;
}

// The key's row and, when the key is good, the reservation of the Idempotency-Key in one statement:
// every POST of an agent pays one round trip for both instead of two (the record's scope is the key's
// id, so it cannot be written before the key is known).
const KEY_AND_RESERVE_SQL = `
  WITH k AS (SELECT ${RUNTIME_KEY_COLUMNS} FROM runtime_key WHERE prefix = $1),
  reserved AS (
    INSERT INTO idempotency_record (scope, key, request_hash)
    SELECT $5 || k.id, $3, $4 FROM k WHERE k.secret_hash = $2 AND k.revoked_at IS NULL
    ON CONFLICT (scope, key) DO NOTHING RETURNING id::text AS id)
  SELECT k.*, (SELECT id FROM reserved) AS record_id FROM k`;

/** Authenticates a POST and reserves its Idempotency-Key (Z5) together. */
export async function authenticateAndReserve(
  db: Db,
  request: Request,
  meta: RequestMeta,
  action: ApiDoorAction,
  idempotency: { key: string; hash: string },
): Promise<{ actor: RuntimeActor; reservation: Reservation }> {
  const token = bearerToken(request);
  if (!token) throw await refuse(db, request, meta, action, NO_TOKEN);
  const prefix = runtimeKeyPrefix(token);
  if (!prefix) throw await refuse(db, request, meta, action, checkRuntimeKey(undefined, token));
  const [row] = await sqlRows<RuntimeKeyRow & { record_id: string | null }>(
    db,
    KEY_AND_RESERVE_SQL,
    [prefix, hashToken(token), idempotency.key, idempotency.hash, RUNTIME_SCOPE_PREFIX],
    'runtime_key_and_reserve',
  );
  const result = checkRuntimeKey(row, token);
  if (!result.ok) throw await refuse(db, request, meta, action, result);
  await noteRuntimeKeyUse(db, row!);
  const reservation =
    row!.record_id !== null
      ? { id: row!.record_id }
      : await existingRecord(db, runtimeScope(result.actor.id), idempotency.key, idempotency.hash);
  return { actor: result.actor, reservation };
}

/**
 * Authenticates a replayed claim in the statement that also reads its key's held row and stores its
 * Idempotency-Key record when it may (held-claim.ts). The key is checked here exactly as by
 * authenticate, and refused the same way (401, audited).
 */
export async function authenticateHeldClaim(
  db: Db,
  request: Request,
  meta: RequestMeta,
  action: ApiDoorAction,
  idempotency: { key: string; hash: string },
  claim: { key: string; workflow: string },
): Promise<{ actor: RuntimeActor } & Omit<HeldClaimRead, 'keyRow'>> {
  const token = bearerToken(request);
  if (!token) throw await refuse(db, request, meta, action, NO_TOKEN);
  const prefix = runtimeKeyPrefix(token);
  if (!prefix) throw await refuse(db, request, meta, action, checkRuntimeKey(undefined, token));
  const { keyRow, held, stored } = await readHeldClaim(db, {
    prefix,
    secretHash: hashToken(token),
    workflow: claim.workflow,
    claimKey: claim.key,
    idempotencyKey: idempotency.key,
    requestHash: idempotency.hash,
  });
  const result = checkRuntimeKey(keyRow, token);
  if (!result.ok) throw await refuse(db, request, meta, action, result);
  await noteRuntimeKeyUse(db, keyRow!);
  return { actor: result.actor, held, stored };
}

/** The bearer key as presented, for a statement that checks it itself (outcome-statement.ts): its
 *  prefix and the hash of the token; null when there is none or it is malformed. */
export function presentedKey(request: Request): { token: string; prefix: string; secretHash: string } | null {
  const token = bearerToken(request);
  const prefix = token ? runtimeKeyPrefix(token) : null;
  return token && prefix ? { token, prefix, secretHash: hashToken(token) } : null;
}

/** The actor of a key row a statement read and accepted, checked again here exactly as authenticate
 *  checks it (its last use noted the same way); throws should the two checks ever disagree. */
export async function acceptedKey(db: Db, row: RuntimeKeyRow, token: string): Promise<RuntimeActor> {
  const result = checkRuntimeKey(row, token);
  if (!result.ok) throw new Error(`a runtime key the statement accepted fails its check: ${result.why}`);
  await noteRuntimeKeyUse(db, row);
  return result.actor;
}
