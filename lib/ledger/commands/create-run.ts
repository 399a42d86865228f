// A run of a workflow for one trigger occurrence. The event row is the stable root of every key.
import { z } from 'zod';
import { appendAudit, auditRefusal } from '@/lib/audit/append.ts';
import { forbidden } from '../errors.ts';
import { requireWorkflowScope } from '../scope.ts';
import { parseInput } from '../validate.ts';
import type { CommandContext } from './common.ts';

export const createRunInput = z.strictObject({
  workflow: z.string().trim().min(1).max(128),
  /** Event id or scheduled occurrence id: never the wall clock of the run (K1). */
  triggerId: z.string().trim().min(1).max(256),
});

export async function createRun(ctx: CommandContext, raw: unknown) {
  const input = parseInput(createRunInput, raw);
  const { actor } = ctx;
  // A4: a refused attempt is recorded on the workflow's refused chain (there is no run yet).
  const refusal = {
    action: 'run.create',
    subjectType: 'workflow',
    subjectId: input.workflow,
    detail: { triggerId: input.triggerId },
  } as const;
  if (actor.kind !== 'runtime' && actor.kind !== 'system') {
    const why = 'runs are created by agent runtimes';
    await auditRefusal(ctx.db, { ...refusal, chain: `workflow:${input.workflow}`, actor, why, request: ctx.request });
    throw forbidden(why, { workflow: input.workflow });
  }
  await requireWorkflowScope(ctx, input.workflow, refusal);
  const run = await ctx.db.$transaction(async (tx) => {
    const event = await tx.event.upsert({
      where: { triggerId: input.triggerId },
      create: { triggerId: input.triggerId, workflow: input.workflow },
      update: {},
    });
    if (event.workflow !== input.workflow) {
      throw forbidden(`trigger ${input.triggerId} belongs to workflow ${event.workflow}`, { field: 'triggerId' });
    }
    const created = await tx.run.create({
      data: { workflow: input.workflow, eventId: event.id, createdByKind: actor.kind, createdBy: actor.label },
    });
    await appendAudit(tx, {
      chain: `run:${created.id}`,
      actor,
      action: 'run.create',
      subjectType: 'run',
      subjectId: created.id,
      runId: created.id,
      after: 'running',
      detail: { workflow: input.workflow, triggerId: input.triggerId },
      request: ctx.request,
    });
    return created;
  });
  return {
    runId: run.id,
    workflow: run.workflow,
    triggerId: input.triggerId,
    status: run.status,
    createdAt: run.createdAt,
  };
}
