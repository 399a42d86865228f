// The one path every state change after a claim takes: check the table (S7) for this party, then
// ledger_transition locks the row, re-checks the state and writes change + transition + audit in
// one transaction. Refusals change nothing and are audited (A4).
import type { EffectState } from '@/lib/db/generated/enums.ts';
import { sqlRows, type DbOrTx } from '@/lib/db/client.ts';
import type { RawResponseInput } from './record-response.ts';
import { auditRefusal } from '@/lib/audit/append.ts';
import { actorRole, partyOf, requestJson, type Actor, type RequestMeta } from '../actor.ts';
import { forbidden, invalid, LedgerError, notFound } from '../errors.ts';
import { requireEffectScope } from '../scope.ts';
import { allowedSources, TRANSITIONS, type Requirement } from '../transitions.ts';
import type { AuditAction, AuditSubjectOf } from '@/lib/audit/actions.ts';

/** The audit actions whose subject is an effect. */
export type EffectAuditAction = { [A in AuditAction]: 'effect' extends AuditSubjectOf<A> ? A : never }[AuditAction];

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
  /** The attempt's raw provider response (R1), stored with the report in one transaction. */
  response?: RawResponseInput | null;
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
}

interface Row {
  ok: boolean;
  epoch: number;
  from_state: EffectState;
  state: EffectState;
  changed_by: string;
  changed_at: Date;
  receipt: string | null;
  run_id: string;
  problem: string | null;
}

// One statement on the pool (no Prisma round trip): the function locks, checks, writes and audits.
const TRANSITION_SQL = `
  SELECT ok, epoch, from_state, state, changed_by, changed_at, receipt, run_id, problem
    FROM ledger_transition($1, $2::int, $3::"EffectState", $4::"EffectState"[], $5::"ActorKind", $6, $7, $8,
                           $9, $10, $11, $12::jsonb, $13::uuid, $14::jsonb, $15::int, $16::jsonb, $17::bytea)`;

function requirements(to: EffectState, party: string): Set<Requirement> {
  return new Set(
    TRANSITIONS.filter((t) => t.to === to && (t.by as readonly string[]).includes(party)).flatMap((t) => t.needs),
  );
}

export async function transitionEffect(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta },
  req: TransitionRequest,
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
  const response = req.response ?? null;
  const rows = await sqlRows<Row>(
    db,
    TRANSITION_SQL,
    [
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
      response?.status ?? null,
      response ? JSON.stringify(response.headers) : null,
      response ? Buffer.from(response.body) : null,
    ],
    'ledger_transition',
  );
  const row = rows[0];
  if (!row) throw notFound(`no effect ${req.key}${req.epoch ? ` at epoch ${req.epoch}` : ''}`, { field: 'key' });
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
