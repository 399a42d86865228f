// Epoch bump (E1-E3): supersede a done, revoked or stuck epoch with a new pending one. Only a human
// operator or a registered policy may bump, and never on the strength of model-generated input.
import { z } from 'zod';
import type { EffectState } from '@/lib/db/generated/enums.ts';
import { auditRefusal } from '@/lib/audit/append.ts';
import { actorRole, partyOf, requestJson } from '@/lib/core/actor.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import { getEpochPolicy, modelInfluence } from '../policies.ts';
import { checkTransition } from '../transitions.ts';
import { parseInput } from '../validate.ts';
import { effectKeyField, epochField, reasonField } from '../fields.ts';
import type { CommandContext } from './common.ts';

const inputValue = z.strictObject({
  value: z.union([z.string().max(1000), z.number(), z.boolean()]),
  source: z.enum(['workflow', 'trigger', 'tool_argument', 'model']),
});

// Strict: a request that carries anything else (a subject, a body, free text) is refused (422).
export const bumpEpochInput = z.strictObject({
  key: effectKeyField,
  expectedEpoch: epochField.optional(),
  reason: reasonField,
  /** For policy bumps: every input the decision used, with where it came from. */
  inputs: z.record(z.string(), inputValue).optional(),
  /** Set by the four-eyes flow: the approval request this bump executes. */
  approvalRequestId: z.uuid().optional(),
});

export interface BumpEpochResult {
  key: string;
  epoch: number;
  from: EffectState;
}

export async function bumpEpoch(ctx: CommandContext, raw: unknown): Promise<BumpEpochResult> {
  const input = parseInput(bumpEpochInput, raw);
  const { db, actor } = ctx;
  const refuse = async (why: string) => {
    await auditRefusal(db, {
      chain: `effect:${input.key}`,
      actor,
      action: 'effect.bump',
      subjectType: 'effect',
      subjectId: input.key,
      reason: input.reason,
      why,
      request: ctx.request,
    });
    return forbidden(why);
  };
  // The party check is independent of the state: done is one of the states a bump may leave.
  const permitted = checkTransition('done', 'new_epoch', partyOf(actor));
  if (!permitted.allowed) throw await refuse(permitted.why);
  const policy = actor.kind === 'policy' ? getEpochPolicy(actor.id) : undefined;
  if (actor.kind === 'policy' && !policy) throw await refuse(`policy "${actor.id}" is not registered`);
  const influence = modelInfluence(policy, input.inputs ?? {});
  if (influence) throw await refuse(influence);

  const detail = {
    ...(policy ? { policy: policy.name } : {}),
    ...(input.inputs ? { inputs: input.inputs } : {}),
    ...(input.approvalRequestId ? { approvalRequestId: input.approvalRequestId } : {}),
  };
  const rows = await db.$queryRaw<
    { ok: boolean; epoch: number; from_state: EffectState; state: EffectState; problem: string | null }[]
  >`
    SELECT ok, epoch, from_state, state, problem FROM ledger_bump(${input.key}, ${input.expectedEpoch ?? null}::int,
      ${actor.kind}::"ActorKind", ${actor.id}, ${actor.label}, ${actorRole(actor)}, ${input.reason},
      ${JSON.stringify(detail)}::jsonb, ${JSON.stringify(requestJson(ctx.request))}::jsonb)`;
  const row = rows[0];
  if (!row) throw notFound(`no effect ${input.key}`, { field: 'key' });
  if (!row.ok) throw conflict(row.problem ?? 'bump refused', { state: row.from_state, epoch: row.epoch });
  return { key: input.key, epoch: row.epoch, from: row.from_state };
}
