// Claim (S1, S3): derive the key on the server from the registered tool definition, then one call
// to ledger_claim, which commits the pending row before any provider call. Losers skip.
// Claims made at the same moment share one commit (../claim-batcher.ts).
import { z } from 'zod';
import type { EffectState } from '@/lib/db/generated/enums.ts';
import { auditRefusal } from '@/lib/audit/append.ts';
import { partyOf, requestJson, type Actor, type RequestMeta } from '../actor.ts';
import { getRun, getTool } from '../catalog.ts';
import { forbidden, invalid } from '../errors.ts';
import { deriveKey } from '../keys.ts';
import { rememberEffectWorkflow, requireWorkflowScope } from '../scope.ts';
import { checkTransition } from '../transitions.ts';
import { parseInput } from '../validate.ts';
import { sqlPool, type DbOrTx } from '@/lib/db/client.ts';
import { CLAIM_SQL, claimBatcher, claimParams, type ClaimCall, type ClaimRow } from '../claim-batcher.ts';

export const claimEffectInput = z.strictObject({
  runId: z.uuid(),
  tool: z.string().min(1).max(128),
  action: z.string().min(1).max(128),
  recordId: z.string().min(1).max(256),
  target: z.string().min(1).max(2048),
});
export type ClaimEffectInput = z.input<typeof claimEffectInput>;

export type ClaimEffectResult =
  | { claimed: true; key: string; epoch: number; attemptId: string; idempotencyKey: string; target: string }
  | {
      claimed: false;
      key: string;
      epoch: number;
      state: EffectState;
      changedBy: string;
      changedAt: Date;
      target: string;
    };

export async function claimEffect(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta },
  rawInput: unknown,
): Promise<ClaimEffectResult> {
  const input = parseInput(claimEffectInput, rawInput);
  const { db, actor } = ctx;
  const permitted = checkTransition('none', 'pending', partyOf(actor));
  if (!permitted.allowed) {
    await auditRefusal(db, {
      chain: `run:${input.runId}`,
      actor,
      action: 'effect.claim',
      subjectType: 'run',
      subjectId: input.runId,
      why: permitted.why,
      request: ctx.request,
    });
    throw forbidden(permitted.why);
  }
  const [tool, run] = await Promise.all([getTool(db, input.tool), getRun(db, input.runId)]);
  await requireWorkflowScope(ctx, run.workflow, {
    action: 'effect.claim',
    subjectType: 'run',
    subjectId: run.id,
    runId: run.id,
  });
  if (!tool.actions.includes(input.action)) {
    throw invalid(
      'action',
      `action "${input.action}" is not registered for tool "${tool.name}" (registered: ${tool.actions.join(', ')})`,
    );
  }
  const { key, target } = deriveKey({
    triggerId: run.triggerId,
    tool: tool.name,
    action: input.action,
    recordId: input.recordId,
    targetType: tool.targetType,
    target: input.target,
  });
  rememberEffectWorkflow(key, run.workflow);
  const call: ClaimCall = {
    key,
    tool: tool.name,
    action: input.action,
    recordId: input.recordId,
    target,
    targetType: tool.targetType,
    triggerId: run.triggerId,
    runId: run.id,
    actorKind: actor.kind,
    actorId: actor.id,
    actorLabel: actor.label,
    leaseSeconds: tool.leaseSeconds,
    request: JSON.stringify(requestJson(ctx.request)),
  };
  // On the root client, concurrent claims share a commit (claim-batcher.ts); inside a caller's
  // transaction the claim is part of that transaction and commits with it.
  const pool = sqlPool(db);
  const row = pool
    ? await claimBatcher(pool).claim(call)
    : (await db.$queryRawUnsafe<ClaimRow[]>(CLAIM_SQL, ...claimParams(call)))[0]!;
  if (row.claimed) {
    return {
      claimed: true,
      key,
      epoch: row.epoch,
      attemptId: row.attempt_id!,
      idempotencyKey: row.idempotency_key,
      target,
    };
  }
  return {
    claimed: false,
    key,
    epoch: row.epoch,
    state: row.state,
    changedBy: row.changed_by,
    changedAt: row.changed_at,
    target,
  };
}
