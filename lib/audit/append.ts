// Appends one audit entry (A1) in the caller's transaction. seq, prev_hash, hash and the database
// time are assigned by the audit_entry_chain trigger; the placeholders below are overwritten there.
import type { DbOrTx } from '../db/client.ts';
import { Prisma } from '../db/client.ts';
import { actorRole, type Actor, type RequestMeta } from '../core/actor.ts';
import type { AuditAction, AuditSubjectOf } from './actions.ts';

export interface AuditInput<A extends AuditAction = AuditAction> {
  /** Chain this entry extends: one per subject, e.g. `run:<id>`, `user:<id>`, `effect:<key>`. */
  chain: string;
  actor: Actor;
  /** From the catalogue (./actions.ts), with a subject type it allows. */
  action: A;
  subjectType: AuditSubjectOf<A>;
  subjectId: string;
  runId?: string | null;
  before?: string | null;
  after?: string | null;
  reason?: string | null;
  outcome?: 'ok' | 'refused';
  detail?: Record<string, unknown> | null;
  request?: RequestMeta;
}

export async function appendAudit<A extends AuditAction>(db: DbOrTx, input: AuditInput<A>): Promise<void> {
  const outcome = input.outcome ?? 'ok';
  await db.auditEntry.create({
    data: {
      chain: outcome === 'refused' ? `refused:${input.chain}` : input.chain,
      seq: 0,
      prevHash: '',
      hash: '',
      at: new Date(0),
      actorKind: input.actor.kind,
      actorId: input.actor.id,
      actorLabel: input.actor.label,
      actorRole: actorRole(input.actor),
      action: input.action,
      subjectType: input.subjectType,
      subjectId: input.subjectId,
      runId: input.runId ?? null,
      beforeState: input.before ?? null,
      afterState: input.after ?? null,
      reason: input.reason ?? null,
      outcome,
      detail: (input.detail ?? Prisma.DbNull) as Prisma.InputJsonValue,
      ip: input.request?.ip ?? null,
      userAgent: input.request?.userAgent ?? null,
      requestId: input.request?.requestId ?? null,
    },
  });
}

/** Records a refused attempt (A4) outside the refused transaction, on the subject's "refused:" chain. */
export async function auditRefusal<A extends AuditAction>(
  db: DbOrTx,
  input: Omit<AuditInput<A>, 'outcome'> & { why: string },
): Promise<void> {
  const { why, ...rest } = input;
  await appendAudit(db, { ...rest, outcome: 'refused', detail: { ...(rest.detail ?? {}), why } });
}
