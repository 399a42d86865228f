// How a POST with an Idempotency-Key runs (Z5), in one of three orders:
// - the usual one: authenticate and reserve the key in one statement, run the operation, complete
//   the record with its answer;
// - for an outcome report, the whole request in one statement (outcome-statement.ts): the key's
//   check, the reservation, the transition and the stored answer; when that statement writes nothing
//   (a check it makes failed, or one before it), the usual way runs and decides;
// - for a claim, which may be answered from reads alone (a claim of a held key changes nothing):
//   one statement authenticates the caller, reads the claim key's held row and stores the losing
//   claim's answer with its record (held-claim.ts), so a replayed claim is one round trip and one
//   shared commit; when the key is not held, the same statement reserves the record and the claim
//   runs under it. A key used before decides instead of the new answer (storeAnswer), so a retry
//   still gets the first answer, 409 or 422 as always.
import type { ApiDoorAction } from '../audit/actions.ts';
import type { Db } from '../db/client.ts';
import type { Actor, RequestMeta } from '../core/actor.ts';
import type { HeldRow } from '../ledger/commands/peek-claim.ts';
import { acceptedKey, authenticateAndReserve, authenticateHeldClaim, presentedKey } from './auth.ts';
import {
  canonicalJson,
  existingRecord,
  keepsAnswer,
  reserveRecord,
  runReserved,
  runtimeScope,
  storeAnswer,
  type StoredResponse,
} from './idempotency.ts';
import type { OpResult } from './operations.ts';
import type { OneStatementReport, PresentedKey } from './outcome-statement.ts';

type RuntimeActor = Extract<Actor, { kind: 'runtime' }>;

/** A claim prepared before its caller is known: its key, its run's workflow, and its answer from the
 *  key's held row once the caller is (null when the claim must run: it may win). */
export interface ReadOnlyClaim {
  key: string;
  workflow: string;
  finish(actor: RuntimeActor, held: HeldRow | undefined): Promise<OpResult | null>;
}

/** A request run whole in one statement with its key check and reservation (outcome-statement.ts). */
export interface OneStatement {
  run(caller: PresentedKey): Promise<OneStatementReport>;
  /** The operation's answer from what the statement did, as `run` of idempotentPost answers. */
  answer(actor: RuntimeActor, report: () => OpResult): Promise<OpResult>;
}

export async function idempotentPost(
  db: Db,
  request: Request,
  meta: RequestMeta,
  action: ApiDoorAction,
  idempotency: { key: string; hash: string },
  run: (actor: RuntimeActor, answerRecord?: string) => Promise<OpResult>,
  readOnly?: () => Promise<ReadOnlyClaim>,
  oneStatement?: OneStatement,
): Promise<StoredResponse & { replayed: boolean }> {
  const { key, hash } = idempotency;
  const caller = oneStatement && presentedKey(request);
  // A check before the statement failed, or the statement wrote nothing: the usual way decides.
  const report = caller && (await oneStatement.run(caller).catch(() => null));
  if (report && report.stage !== 'refused') {
    const actor = await acceptedKey(db, report.keyRow, caller.token);
    if (report.stage === 'taken') {
      const reservation = await existingRecord(db, runtimeScope(actor.id), key, hash);
      return runReserved(db, reservation, (id) => run(actor, id));
    }
    return runReserved(db, { id: report.recordId }, () => oneStatement.answer(actor, report.answer));
  }
  // The read-only answer's first step needs no caller (the catalog, the derived key); if it fails,
  // the operation runs the usual way and reports the failure itself, after authentication.
  const claim = readOnly && (await readOnly().catch(() => null));
  if (!claim) {
    const { actor, reservation } = await authenticateAndReserve(db, request, meta, action, idempotency);
    return runReserved(db, reservation, (id) => run(actor, id));
  }
  const { actor, held, stored } = await authenticateHeldClaim(db, request, meta, action, idempotency, claim);
  const early = await claim.finish(actor, held);
  if (stored) {
    if (early && early.status === 200 && canonicalJson(early.body) === canonicalJson(stored.body)) {
      return { status: early.status, body: early.body, replayed: false };
    }
    // The statement reserved the record for a claim that may win (no answer yet), or stored an answer
    // this request does not give (a check only the application makes refused it): the claim runs, or
    // the real answer is used, and the record is completed with it, or freed, as for any reservation.
    return runReserved(db, { id: stored.id }, async (id) => early ?? run(actor, id));
  }
  const scope = runtimeScope(actor.id);
  if (early && keepsAnswer(early.status)) return storeAnswer(db, scope, key, hash, early);
  // No read-only answer, or one that is not stored (404, 422, 5xx): the usual way, so that a retry
  // of a request whose first answer was stored still gets that answer, and the operation reports
  // its own refusal.
  return runReserved(db, await reserveRecord(db, scope, key, hash), (id) => run(actor, id));
}
