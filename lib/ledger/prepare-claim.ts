// What every claim checks and derives before ledger_claim, whoever claims (the runtime through the
// API, the replay executor): the transition table for this party (S7; a refusal is audited, A4), the
// runtime key's workflows (Z6), the tool's registered action, and the key derived on the server from
// the registered tool and the run's trigger (K1-K3), never taken from the caller.
import { auditRefusal } from '../audit/append.ts';
import type { DbOrTx } from '../db/client.ts';
import { partyOf, requestJson, type Actor, type RequestMeta } from './actor.ts';
import { getRun, getTool } from './catalog.ts';
import type { ClaimCall } from './claim-batcher.ts';
import { forbidden, invalid } from './errors.ts';
import { deriveKey } from './keys.ts';
import { rememberEffectWorkflow, requireWorkflowScope } from './scope.ts';
import { checkTransition } from './transitions.ts';

/** The intent a claim names; the key is derived from it. */
export interface ClaimIntent {
  runId: string;
  tool: string;
  action: string;
  recordId: string;
  target: string;
}

export async function prepareClaim(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta },
  input: ClaimIntent,
): Promise<ClaimCall> {
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
  return {
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
}
