// How a POST with an Idempotency-Key runs (Z5), in one of two orders:
// - the usual one: authenticate and reserve the key in one statement, run the operation, complete
//   the record with its answer;
// - for an operation that may answer from reads alone (a claim of a held key, which changes nothing):
//   read for that answer while the caller is authenticated, then store it with its record in one
//   insert. That saves the reservation's own commit and a round trip on every replayed claim. A key
//   used before decides instead of the new answer (storeAnswer), so a retry still gets the first
//   answer, 409 or 422 as always.
import type { ApiDoorAction } from '../audit/actions.ts';
import type { Db } from '../db/client.ts';
import type { Actor, RequestMeta } from '../ledger/actor.ts';
import { authenticate, authenticateAndReserve } from './auth.ts';
import {
  keepsAnswer,
  reserveRecord,
  runReserved,
  runtimeScope,
  storeAnswer,
  type StoredResponse,
} from './idempotency.ts';
import type { OpResult } from './operations.ts';

type RuntimeActor = Extract<Actor, { kind: 'runtime' }>;

export async function idempotentPost(
  db: Db,
  request: Request,
  meta: RequestMeta,
  action: ApiDoorAction,
  idempotency: { key: string; hash: string },
  run: (actor: RuntimeActor) => Promise<OpResult>,
  readOnly?: () => Promise<(actor: RuntimeActor) => Promise<OpResult | null>>,
): Promise<StoredResponse & { replayed: boolean }> {
  const { key, hash } = idempotency;
  if (!readOnly) {
    const { actor, reservation } = await authenticateAndReserve(db, request, meta, action, idempotency);
    return runReserved(db, reservation, () => run(actor));
  }
  // The read-only answer's first step (its reads) runs while the caller is authenticated; if it
  // fails, the operation runs the usual way and reports the failure itself, after authentication.
  const [actor, finish] = await Promise.all([authenticate(db, request, meta, action), readOnly().catch(() => null)]);
  const scope = runtimeScope(actor.id);
  const early = finish && (await finish(actor));
  if (early && keepsAnswer(early.status)) return storeAnswer(db, scope, key, hash, early);
  // No read-only answer, or one that is not stored (404, 422, 5xx): the usual way, so that a retry
  // of a request whose first answer was stored still gets that answer, and the operation reports
  // its own refusal.
  return runReserved(db, await reserveRecord(db, scope, key, hash), () => run(actor));
}
