// Submit a run's intended target set (P1). Targets are normalized and keyed on the server; invalid
// items are reported one by one and nothing is written for a plan with any invalid item.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { appendAudit, auditRefusal } from '@/lib/audit/append.ts';
import { may, whoMay } from '@/lib/core/permissions.ts';
import { getRun, getTool, type ToolInfo } from '../catalog.ts';
import { conflict, forbidden, invalid, LedgerError } from '../errors.ts';
import { deriveKey } from '../keys.ts';
import { requireWorkflowScope } from '../scope.ts';
import { parseInput } from '../validate.ts';
import type { CommandContext } from './common.ts';

export const MAX_PLAN_ITEMS = 1_000_000;

export const planItemInput = z.strictObject({
  tool: z.string().min(1).max(128),
  action: z.string().min(1).max(128),
  recordId: z.string().min(1).max(256),
  target: z.string().min(1).max(2048),
});

export const submitPlanInput = z.strictObject({
  runId: z.uuid(),
  items: z.array(planItemInput).min(1).max(MAX_PLAN_ITEMS),
});

export interface PlanItemProblem {
  index: number;
  field: string;
  message: string;
}

/** SHA-256 over the sorted keys: binds an approval to exactly this set. */
export function itemsHash(keys: readonly string[]): string {
  const hash = createHash('sha256');
  for (const key of [...keys].sort()) hash.update(key).update('\n');
  return hash.digest('hex');
}

export async function submitPlan(ctx: CommandContext, raw: unknown) {
  const input = parseInput(submitPlanInput, raw);
  const { db, actor } = ctx;
  const refuse = async (why: string) => {
    await auditRefusal(db, {
      chain: `run:${input.runId}`,
      actor,
      action: 'plan.submit',
      subjectType: 'run',
      subjectId: input.runId,
      runId: input.runId,
      why,
      detail: { items: input.items.length },
      request: ctx.request,
    });
    return forbidden(why);
  };
  if (!may(actor, 'plan.submit')) {
    throw await refuse(`plans are submitted by agent runtimes or by ${whoMay('plan.submit')}`);
  }
  const run = await getRun(db, input.runId);
  await requireWorkflowScope(ctx, run.workflow, {
    action: 'plan.submit',
    subjectType: 'run',
    subjectId: input.runId,
    runId: input.runId,
    detail: { items: input.items.length },
  });

  const tools = new Map<string, ToolInfo | null>();
  const problems: PlanItemProblem[] = [];
  const rows: {
    key: string;
    tool: string;
    action: string;
    recordId: string;
    target: string;
    targetType: ToolInfo['targetType'];
  }[] = [];
  const seen = new Set<string>();
  for (const [index, item] of input.items.entries()) {
    if (!tools.has(item.tool)) tools.set(item.tool, await getTool(db, item.tool).catch(() => null));
    const tool = tools.get(item.tool);
    if (!tool) {
      problems.push({ index, field: `items.${index}.tool`, message: `tool "${item.tool}" is not registered` });
      continue;
    }
    if (!tool.actions.includes(item.action)) {
      problems.push({
        index,
        field: `items.${index}.action`,
        message: `action "${item.action}" is not registered for ${tool.name}`,
      });
      continue;
    }
    try {
      const { key, target, recordId } = deriveKey({
        triggerId: run.triggerId,
        tool: tool.name,
        action: item.action,
        recordId: item.recordId,
        targetType: tool.targetType,
        target: item.target,
      });
      if (seen.has(key)) {
        problems.push({
          index,
          field: `items.${index}.target`,
          message: `duplicate of an earlier item (same record, action and normalized target ${target})`,
        });
        continue;
      }
      seen.add(key);
      rows.push({
        key,
        tool: tool.name,
        action: item.action,
        recordId,
        target,
        targetType: tool.targetType,
      });
    } catch (error) {
      if (!(error instanceof LedgerError)) throw error;
      problems.push({ index, field: `items.${index}.${error.details.field ?? 'target'}`, message: error.message });
    }
  }
  if (problems.length) {
    throw invalid(
      problems[0]!.field,
      `${problems.length} of ${input.items.length} plan items are invalid; nothing was written`,
      { items: problems.slice(0, 1000) },
    );
  }

  const hash = itemsHash(rows.map((r) => r.key));
  const planId = await db.$transaction(
    async (tx) => {
      // Submissions for one run take turns on the run's row, so the second sees the first's plan
      // and is refused. NO KEY UPDATE, not UPDATE: claims on the run (their key share lock, through
      // the foreign key) go on while a large plan is written.
      await tx.$queryRaw`SELECT 1 FROM run WHERE id = ${run.id}::uuid FOR NO KEY UPDATE`;
      const open = await tx.plan.findFirst({
        where: { runId: run.id, status: { in: ['submitted', 'approved'] } },
        select: { id: true, status: true },
      });
      if (open) throw conflict(`run ${run.id} already has a ${open.status} plan (${open.id})`, { planId: open.id });
      const plan = await tx.plan.create({
        data: {
          runId: run.id,
          authorKind: actor.kind,
          authorId: actor.id,
          authorLabel: actor.label,
          itemCount: rows.length,
          itemsHash: hash,
        },
      });
      for (let i = 0; i < rows.length; i += 5000) {
        await tx.planItem.createMany({
          data: rows.slice(i, i + 5000).map((r) => ({ ...r, planId: plan.id, runId: run.id })),
        });
      }
      await appendAudit(tx, {
        chain: `run:${run.id}`,
        actor,
        action: 'plan.submit',
        subjectType: 'plan',
        subjectId: plan.id,
        runId: run.id,
        after: 'submitted',
        detail: { items: rows.length, itemsHash: hash },
        request: ctx.request,
      });
      return plan.id;
    },
    { timeout: 600_000 },
  );
  return { planId, runId: run.id, status: 'submitted' as const, itemCount: rows.length, itemsHash: hash };
}
