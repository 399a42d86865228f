// Claim (S1, S3): derive the key on the server from the registered tool definition, then one call
// to ledger_claim, which commits the pending row before any provider call. Losers skip.
import { z } from 'zod';
import type { EffectState } from '../../db/generated/enums.ts';
import { auditRefusal } from '../../audit/append.ts';
import { partyOf, requestJson, type Actor, type RequestMeta } from '../actor.ts';
import { getRun, getTool } from '../catalog.ts';
import { forbidden, invalid } from '../errors.ts';
import { deriveKey } from '../keys.ts';
import { checkTransition } from '../transitions.ts';
import { parseInput } from '../validate.ts';
import { sqlPool, type DbOrTx } from '../../db/client.ts';

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
  | { claimed: false; key: string; epoch: number; state: EffectState; changedBy: string; changedAt: Date; target: string };

const CLAIM_SQL = `
  SELECT claimed, epoch, state, attempt_id, idempotency_key, changed_by, changed_at
  FROM ledger_claim($1, $2, $3, $4, $5, $6::"TargetType", $7, $8::uuid, $9::"ActorKind", $10, $11, $12::int, $13::jsonb)`;

interface ClaimRow {
  claimed: boolean;
  epoch: number;
  state: EffectState;
  attempt_id: string | null;
  idempotency_key: string;
  changed_by: string;
  changed_at: Date;
}

export async function claimEffect(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta },
  rawInput: unknown,
): Promise<ClaimEffectResult> {
  const input = parseInput(claimEffectInput, rawInput);
  const { db, actor } = ctx;
  const permitted = checkTransition('none', 'pending', partyOf(actor));
  if (!permitted.allowed) {
    await auditRefusal(db, { chain: `run:${input.runId}`, actor, action: 'effect.claim', subjectType: 'run', subjectId: input.runId, why: permitted.why, request: ctx.request });
    throw forbidden(permitted.why);
  }
  const [tool, run] = await Promise.all([getTool(db, input.tool), getRun(db, input.runId)]);
  if (actor.kind === 'runtime' && !actor.workflows.includes('*') && !actor.workflows.includes(run.workflow)) {
    const why = `runtime key "${actor.label}" is not scoped to workflow "${run.workflow}"`;
    await auditRefusal(db, { chain: `run:${run.id}`, actor, action: 'effect.claim', subjectType: 'run', subjectId: run.id, runId: run.id, why, request: ctx.request });
    throw forbidden(why, { workflow: run.workflow });
  }
  if (!tool.actions.includes(input.action)) {
    throw invalid('action', `action "${input.action}" is not registered for tool "${tool.name}" (registered: ${tool.actions.join(', ')})`);
  }
  const { key, target } = deriveKey({
    triggerId: run.triggerId,
    tool: tool.name,
    action: input.action,
    recordId: input.recordId,
    targetType: tool.targetType,
    target: input.target,
  });
  const params = [
    key, tool.name, input.action, input.recordId, target, tool.targetType, run.triggerId, run.id,
    actor.kind, actor.id, actor.label, tool.leaseSeconds, JSON.stringify(requestJson(ctx.request)),
  ];
  const pool = sqlPool(db);
  const rows = pool ? (await pool.query<ClaimRow>(CLAIM_SQL, params)).rows : await db.$queryRawUnsafe<ClaimRow[]>(CLAIM_SQL, ...params);
  const row = rows[0]!;
  if (row.claimed) {
    return { claimed: true, key, epoch: row.epoch, attemptId: row.attempt_id!, idempotencyKey: row.idempotency_key, target };
  }
  return { claimed: false, key, epoch: row.epoch, state: row.state, changedBy: row.changed_by, changedAt: row.changed_at, target };
}
