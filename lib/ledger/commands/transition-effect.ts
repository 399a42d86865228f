// The one path every state change after a claim takes: check the table (S7) for this party, then
// ledger_transition locks the row, re-checks the state and writes change + transition + audit in
// one transaction. Refusals change nothing and are audited (A4).
// One statement, on the node-postgres pool under the root client (Prisma's per-query cost was a third
// of the replay executor's CPU; lib/db/client.ts), through Prisma inside a caller's transaction. The
// provider's raw response (R1) can be stored in the same statement, so a state never commits without
// the response that justifies it; a caller can add a write of its own that commits with the
// transition only when it is accepted (the replay's item outcome: lib/replay/item-outcome.ts).
import type { EffectState } from '@/lib/db/generated/enums.ts';
import { sqlRows, type DbOrTx } from '@/lib/db/client.ts';
import { auditRefusal } from '@/lib/audit/append.ts';
import { actorRole, partyOf, requestJson, type Actor, type RequestMeta } from '@/lib/core/actor.ts';
import { forbidden, invalid, LedgerError, notFound } from '../errors.ts';
import { requireEffectScope } from '../scope.ts';
import { allowedSources, TRANSITIONS, type Requirement } from '../transitions.ts';
import { traced } from '@/lib/ops/tracing.ts';
import type { AuditAction, AuditSubjectOf } from '@/lib/audit/actions.ts';

/** The audit actions whose subject is an effect. */
export type EffectAuditAction = { [A in AuditAction]: 'effect' extends AuditSubjectOf<A> ? A : never }[AuditAction];
import { responseValues, storeResponseSql, type RawResponseRecord } from './record-response.ts';

export interface TransitionRequest {
  key: string;
  /** The epoch the caller acted on; omitted: the key's current epoch. */
  epoch?: number;
  to: EffectState;
  /** Audit action name, e.g. effect.complete. */
  action: EffectAuditAction;
  reason?: string | null;
  receipt?: string | null;
  evidence?: Record<string, unknown> | null;
  attemptId?: string | null;
  /** R1: the provider's raw response, stored with `attemptId` in the same statement, whether or not
   *  the transition is accepted (a response already stored is kept). */
  response?: RawResponseRecord | null;
  /** The same request again after its reply was lost (a database outage): an effect found already
   *  in `to` counts as this request's own earlier commit, not as a refusal. */
  repeat?: boolean;
}

/** A caller's write that commits in the transition's statement, and only when the transition is
 *  accepted: common table expressions that may read `gate` (one row, `ok`), with placeholders $1..$n
 *  for `values`. `result`, an SQL expression over them, comes back as `alongside`; `name` names the
 *  prepared statement (same name, same SQL). */
export interface AlongsideWrite {
  name: string;
  ctes: string;
  values: unknown[];
  result: string;
}

export interface TransitionResult {
  key: string;
  epoch: number;
  from: EffectState;
  state: EffectState;
  changedBy: string;
  changedAt: Date;
  receipt: string | null;
  runId: string;
  /** The AlongsideWrite's result (null when the transition was not accepted); only with one. */
  alongside?: unknown;
}

/** ledger_transition's row, with the attempt check (and an alongside write's result). */
export interface TransitionRow {
  attempt_ok: boolean;
  /** Null when no effect has the key (or the attempt was refused). */
  ok: boolean | null;
  epoch: number;
  from_state: EffectState;
  state: EffectState;
  changed_by: string;
  changed_at: Date;
  receipt: string | null;
  run_id: string;
  problem: string | null;
  alongside?: unknown;
}

/** The statement, its own placeholders numbered after the alongside write's `offset` values. */
function transitionSql(offset: number, alongside?: AlongsideWrite): string {
  const p = (n: number) => `$${offset + n}`;
  // The attempt named must be one of this key's (the key's scope is what was checked): otherwise
  // nothing runs, neither the transition nor the response's write.
  return `
  WITH att AS (SELECT ${p(13)}::uuid IS NULL OR EXISTS (
      SELECT 1 FROM attempt WHERE id = ${p(13)}::uuid AND key = ${p(1)}) AS ok),
  t AS MATERIALIZED (
    SELECT * FROM ledger_transition(${p(1)}, ${p(2)}::int, ${p(3)}::"EffectState", ${p(4)}::"EffectState"[],
      ${p(5)}::"ActorKind", ${p(6)}, ${p(7)}, ${p(8)}, ${p(9)}, ${p(10)}, ${p(11)}, ${p(12)}::jsonb, ${p(13)}::uuid,
      ${p(14)}::jsonb) WHERE (SELECT ok FROM att)),
  gate AS (SELECT coalesce((SELECT ok FROM t), false) AS ok),
  resp AS (${storeResponseSql(p(13), p(15), p(16), p(17))} AND (SELECT ok FROM att) RETURNING id)${
    alongside ? `,\n  ${alongside.ctes}` : ''
  }
  SELECT att.ok AS attempt_ok, t.ok, t.epoch, t.from_state, t.state, t.changed_by, t.changed_at, t.receipt, t.run_id,
    t.problem${alongside ? `, ${alongside.result} AS alongside` : ''} FROM att LEFT JOIN t ON true`;
}

const PLAIN_SQL = transitionSql(0);
const withAlongside = new Map<string, string>();

function requirements(to: EffectState, party: string): Set<Requirement> {
  return new Set(
    TRANSITIONS.filter((t) => t.to === to && (t.by as readonly string[]).includes(party)).flatMap((t) => t.needs),
  );
}

export function transitionEffect(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta },
  req: TransitionRequest,
  alongside?: AlongsideWrite,
): Promise<TransitionResult> {
  const attributes = {
    'ledger.key': req.key,
    'ledger.to': req.to,
    'ledger.actor': ctx.actor.kind,
    'ledger.request_id': ctx.request?.requestId ?? '',
  };
  return traced('ledger.transition', attributes, async (span) => {
    const result = await transitionEffectUntraced(ctx, req, alongside);
    span?.setAttributes({ 'ledger.epoch': result.epoch, 'ledger.from': result.from, 'ledger.state': result.state });
    return result;
  });
}

async function transitionEffectUntraced(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta },
  req: TransitionRequest,
  alongside?: AlongsideWrite,
): Promise<TransitionResult> {
  const { db, actor } = ctx;
  const party = partyOf(actor);
  const sources = allowedSources(req.to, party);
  if (sources.length === 0) {
    const why = `${party} may never move an effect to ${req.to}`;
    await auditRefusal(db, {
      chain: `effect:${req.key}`,
      actor,
      action: req.action,
      subjectType: 'effect',
      subjectId: req.key,
      after: req.to,
      reason: req.reason,
      why,
      request: ctx.request,
    });
    throw forbidden(why);
  }
  // Z6: a runtime key reports only effects of its own workflows.
  await requireEffectScope(ctx, req.key, {
    action: req.action,
    subjectType: 'effect',
    chain: `effect:${req.key}`,
    after: req.to,
    reason: req.reason,
  });
  const { reason, receipt } = transitionInput(party, req);
  const values = [
    ...(alongside?.values ?? []),
    req.key,
    req.epoch ?? null,
    req.to,
    sources,
    actor.kind,
    actor.id,
    actor.label,
    actorRole(actor),
    req.action,
    reason,
    receipt,
    req.evidence ? JSON.stringify(req.evidence) : null,
    req.attemptId ?? null,
    JSON.stringify(requestJson(ctx.request)),
    ...responseValues(req.response),
  ];
  let sql = PLAIN_SQL;
  if (alongside) {
    sql = withAlongside.get(alongside.name) ?? transitionSql(alongside.values.length, alongside);
    withAlongside.set(alongside.name, sql);
  }
  const name = alongside ? `ledger_transition+${alongside.name}` : 'ledger_transition';
  const [row] = await sqlRows<TransitionRow>(db, sql, values, name);
  return readTransitionRow(req, row, alongside !== undefined);
}

/** A transition's input checks that need no database (S2 and the table's requirements, S7): the
 *  trimmed reason and receipt, or a 422 naming the field. */
export function transitionInput(
  party: string,
  req: TransitionRequest,
): { reason: string | null; receipt: string | null } {
  const needs = requirements(req.to, party);
  const reason = req.reason?.trim() || null;
  const receipt = req.receipt?.trim() || null;
  if (needs.has('reason') && !reason) throw invalid('reason', 'a reason is required for this decision');
  if (needs.has('receipt') && !receipt)
    throw invalid('receipt', `${req.to} needs a provider receipt that can be looked up later (S2)`);
  if (needs.has('evidence') && !req.evidence)
    throw invalid('evidence', 'the provider response is required as evidence');
  if (needs.has('receipt_or_evidence') && !receipt && !req.evidence)
    throw invalid('receipt', 'give the provider receipt, or evidence that it was sent');
  if (req.to === 'done' && !receipt) {
    // Support resolving with evidence only: the evidence reference becomes the lookup handle (S2).
    throw invalid('receipt', 'done needs a receipt or an evidence reference that can be looked up later');
  }
  if (req.response && !req.attemptId) throw invalid('attemptId', 'a raw response needs the attemptId of its claim');
  return { reason, receipt };
}

/** The transition statement's row as the command's answer, or its refusal (422, 404, 409). */
export function readTransitionRow(
  req: TransitionRequest,
  row: TransitionRow | undefined,
  withAlongside = false,
): TransitionResult {
  if (row && !row.attempt_ok)
    throw invalid('attemptId', `attempt ${req.attemptId} is not an attempt of ${req.key}: nothing was recorded`);
  if (!row || row.ok === null)
    throw notFound(`no effect ${req.key}${req.epoch ? ` at epoch ${req.epoch}` : ''}`, { field: 'key' });
  if (!row.ok && req.repeat && row.from_state === req.to) {
    // This request's own earlier commit; the alongside write was made with it.
    return { ...resultOf(req, row), ...(withAlongside ? { alongside: null } : {}) };
  }
  if (!row.ok) {
    const why = row.problem && row.problem !== 'transition not allowed' ? `: ${row.problem}` : '';
    throw new LedgerError(
      'invalid_transition',
      `cannot move ${req.key} (epoch ${row.epoch}) from ${row.from_state} to ${req.to}${why}`,
      {
        state: row.from_state,
        epoch: row.epoch,
        changedBy: row.changed_by,
        changedAt: row.changed_at,
      },
    );
  }
  return { ...resultOf(req, row), ...(withAlongside ? { alongside: row.alongside } : {}) };
}

function resultOf(req: TransitionRequest, row: TransitionRow): TransitionResult {
  return {
    key: req.key,
    epoch: row.epoch,
    from: row.from_state,
    state: row.state,
    changedBy: row.changed_by,
    changedAt: row.changed_at,
    receipt: row.receipt,
    runId: row.run_id,
  };
}
