// Z5: every POST honours an Idempotency-Key. The record is claimed with one INSERT ... ON CONFLICT DO
// NOTHING before the operation runs (so of two concurrent duplicates exactly one runs; the other gets
// 409), and completed with the response. A retry with the same key and body gets the stored
// response; the same key with a different request is refused with 422. Records are scoped to the
// runtime key. A 5xx is not stored (the key is freed so the retry runs), nor is a 404 or 422: those
// were refused before anything changed, so a corrected request may reuse the key. A record whose first request
// died before completing (the process crashed) is taken over after STALE_SECONDS: every operation
// behind the API is itself safe to repeat (claims lose, transitions are checked).
import { createHash } from 'node:crypto';
import { sqlRows, type Db } from '../db/client.ts';
import { conflict, invalid } from '../core/errors.ts';
import { completeRecord } from './idempotency-complete.ts';
import { insertRecord } from './idempotency-insert.ts';
import { jsonSafe } from './problem.ts';

export const STALE_SECONDS = 120;
const KEY = /^[\x21-\x7e]{1,255}$/;

export interface StoredResponse {
  status: number;
  body: unknown;
}

export function parseIdempotencyKey(request: Request): string | null {
  const key = request.headers.get('idempotency-key');
  if (key === null) return null;
  if (!KEY.test(key))
    throw invalid('Idempotency-Key', 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces');
  return key;
}

/** Hash of what makes two requests "the same": method, path and the JSON body in canonical form. */
export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body)}`)
    .digest('hex');
}

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value as Record<string, unknown>).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

// Plain statements on the pool (lib/db/client.ts sqlRows); records are created by
// idempotency-insert.ts and completed by idempotency-complete.ts, both group-committed.
const PRIOR_SQL = `
  SELECT id::text AS id, request_hash, response_status, response_body, created_at < now() - make_interval(secs => $3::int) AS stale
    FROM idempotency_record WHERE scope = $1 AND key = $2`;
const TAKE_OVER_SQL = `
  UPDATE idempotency_record SET created_at = now()
   WHERE id = $1::bigint AND response_status IS NULL AND created_at < now() - make_interval(secs => $2::int)
  RETURNING id::text AS id`;
const FREE_SQL = 'DELETE FROM idempotency_record WHERE id = $1::bigint';

/** The scope of a runtime's records: a key means the same thing only for the runtime that sent it. */
export const RUNTIME_SCOPE_PREFIX = 'runtime:';
export const runtimeScope = (runtimeKeyId: string) => `${RUNTIME_SCOPE_PREFIX}${runtimeKeyId}`;

/** A reserved record (this request runs the operation), or the stored answer of an earlier one. */
export type Reservation = { id: string } | { stored: StoredResponse };

export async function withIdempotency(
  db: Db,
  scope: string,
  key: string,
  hash: string,
  run: () => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  return runReserved(db, await reserveRecord(db, scope, key, hash), run);
}

/** Reserves the key for a request about to run its operation, or decides from the earlier record. */
export async function reserveRecord(db: Db, scope: string, key: string, hash: string): Promise<Reservation> {
  const id = await insertRecord(db, { scope, key, hash, answer: null });
  return id !== null ? { id } : existingRecord(db, scope, key, hash);
}

/** Whether an answer is stored for replay. A 5xx may not have finished; a 404 or 422 was refused
 *  before anything changed, so the key is freed for a corrected request. */
export function keepsAnswer(status: number): boolean {
  return status < 500 && status !== 404 && status !== 422;
}

/**
 * Stores an answer that changed nothing (a claim of a held key), computed before any reservation,
 * together with its record: one insert instead of a reservation and a completion. When the key was
 * already used, the earlier record decides exactly as for any other request (its stored answer, 409
 * while it runs, 422 for a different request), never this answer; a stale record of a request that
 * died is taken over and completed with this answer.
 */
export async function storeAnswer(
  db: Db,
  scope: string,
  key: string,
  hash: string,
  answer: StoredResponse,
): Promise<StoredResponse & { replayed: boolean }> {
  if (!keepsAnswer(answer.status)) throw new Error(`storeAnswer: a ${answer.status} answer is not stored`);
  const body = jsonSafe(answer.body);
  const id = await insertRecord(db, {
    scope,
    key,
    hash,
    answer: { status: answer.status, body: JSON.stringify(body) },
  });
  if (id !== null) return { status: answer.status, body, replayed: false };
  return runReserved(db, await existingRecord(db, scope, key, hash), async () => answer);
}

/** When the key was already taken: the stored answer, a take-over of a record whose request died, or
 *  a refusal (in progress, or the key was used for a different request). */
export async function existingRecord(db: Db, scope: string, key: string, hash: string): Promise<Reservation> {
  const [prior] = await sqlRows<{
    id: string;
    request_hash: string;
    response_status: number | null;
    response_body: unknown;
    stale: boolean;
  }>(db, PRIOR_SQL, [scope, key, STALE_SECONDS], 'idempotency_prior');
  if (!prior)
    throw conflict('a request with this Idempotency-Key is in progress; retry it', { idempotency: 'in_progress' });
  if (prior.request_hash !== hash) {
    throw invalid(
      'Idempotency-Key',
      'this Idempotency-Key was already used with a different request: use a new key for a new request',
    );
  }
  if (prior.response_status !== null) return { stored: { status: prior.response_status, body: prior.response_body } };
  if (!prior.stale)
    throw conflict('a request with this Idempotency-Key is still in progress; retry it later', {
      idempotency: 'in_progress',
    });
  const taken = await sqlRows<{ id: string }>(db, TAKE_OVER_SQL, [prior.id, STALE_SECONDS], 'idempotency_take_over');
  if (!taken[0])
    throw conflict('a request with this Idempotency-Key is still in progress; retry it later', {
      idempotency: 'in_progress',
    });
  return { id: taken[0].id };
}

/** Runs the operation under a reserved record and completes (or frees) the record with its answer.
 *  The operation gets the record's id: one that stores its answer there in its own statement says so
 *  (`stored`, the body it wrote), and the completion is skipped when that is the answer it gives. */
export async function runReserved(
  db: Db,
  reservation: Reservation,
  run: (recordId: string) => Promise<StoredResponse & { stored?: StoredResponse | null }>,
): Promise<StoredResponse & { replayed: boolean }> {
  if ('stored' in reservation) return { ...reservation.stored, replayed: true };
  const { id } = reservation;
  let result: StoredResponse & { stored?: StoredResponse | null };
  try {
    result = await run(id);
  } catch (error) {
    await sqlRows(db, FREE_SQL, [id], 'idempotency_free');
    throw error;
  }
  if (!keepsAnswer(result.status)) {
    await sqlRows(db, FREE_SQL, [id], 'idempotency_free');
  } else {
    const body = jsonSafe(result.body);
    const { stored } = result;
    const storedAlready =
      stored != null && stored.status === result.status && canonicalJson(stored.body) === canonicalJson(body);
    if (!storedAlready) await completeRecord(db, id, result.status, JSON.stringify(body));
    result = { status: result.status, body };
  }
  return { status: result.status, body: result.body, replayed: false };
}
