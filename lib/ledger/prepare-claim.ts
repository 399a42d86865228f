// What every claim checks and derives before ledger_claim, whoever claims (the runtime through the
// API, the replay executor): the transition table for this party (S7; a refusal is audited, A4), the
// runtime key's workflows (Z6), the tool's registered action, and the key derived on the server from
// the registered tool and the run's trigger (K1-K3), never taken from the caller.
import { auditRefusal } from '../audit/append.ts';
import type { DbOrTx } from '../db/client.ts';
import { partyOf, requestJson, type Actor, type RequestMeta } from '../core/actor.ts';
import { getRun, getTool, type RunInfo, type ToolInfo } from './catalog.ts';
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
  await requireClaimer(ctx, input.runId);
  const [tool, run] = await Promise.all([getTool(ctx.db, input.tool), getRun(ctx.db, input.runId)]);
  await requireClaimScope(ctx, run);
  return claimCall(ctx, input, tool, run);
}

/** S7: only the parties the transition table lets claim may claim (a refusal is audited, A4). */
export async function requireClaimer(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta },
  runId: string,
): Promise<void> {
  const permitted = checkTransition('none', 'pending', partyOf(ctx.actor));
  if (permitted.allowed) return;
  await auditRefusal(ctx.db, {
    chain: `run:${runId}`,
    actor: ctx.actor,
    action: 'effect.claim',
    subjectType: 'run',
    subjectId: runId,
    why: permitted.why,
    request: ctx.request,
  });
  throw forbidden(permitted.why);
}

/** Z6: the runtime key must be scoped to the run's workflow (a refusal is audited, A4). */
export async function requireClaimScope(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta },
  run: RunInfo,
): Promise<void> {
  await requireWorkflowScope(ctx, run.workflow, {
    action: 'effect.claim',
    subjectType: 'run',
    subjectId: run.id,
    runId: run.id,
  });
}

/** K1-K3: the tool's registered action, then the key derived from the registered tool and the run's
 *  trigger. Needs no actor, so it may run before the caller is known (it reads only the catalog). */
export function deriveClaimKey(
  input: ClaimIntent,
  tool: ToolInfo,
  run: RunInfo,
): { key: string; target: string; recordId: string } {
  // Runs are created with their trigger in normal form C (create-run.ts). An event stored before
  // that, in another form, would derive the keys of its normal-form twin, which may belong to
  // another workflow: its runs claim nothing.
  if (run.triggerId !== run.triggerId.normalize('NFC'))
    throw invalid('runId', `run ${run.id}: its trigger id is not in Unicode normal form C; create a new run`);
  if (!tool.actions.includes(input.action)) {
    throw invalid(
      'action',
      `action "${input.action}" is not registered for tool "${tool.name}" (registered: ${tool.actions.join(', ')})`,
    );
  }
  return deriveKey({
    triggerId: run.triggerId,
    tool: tool.name,
    action: input.action,
    recordId: input.recordId,
    targetType: tool.targetType,
    target: input.target,
  });
}

function claimCall(
  ctx: { actor: Actor; request?: RequestMeta },
  input: ClaimIntent,
  tool: ToolInfo,
  run: RunInfo,
): ClaimCall {
  // The record id is stored as keyed (K3: no surrounding whitespace, normal form C), like the target.
  const { key, target, recordId } = deriveClaimKey(input, tool, run);
  rememberEffectWorkflow(key, run.workflow);
  const { actor } = ctx;
  return {
    key,
    tool: tool.name,
    action: input.action,
    recordId,
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
