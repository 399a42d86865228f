// A run of a workflow for one trigger occurrence. The event row is the stable root of every key.
import { z } from 'zod';
import { appendAudit, auditRefusal } from '@/lib/audit/append.ts';
import { forbidden } from '../errors.ts';
import { requireWorkflowScope } from '../scope.ts';
import { parseInput } from '../validate.ts';
import type { CommandContext } from './common.ts';

export const createRunInput = z.strictObject({
  workflow: z.string().trim().min(1).max(128),
  /** Event id or scheduled occurrence id: never the wall clock of the run (K1). Stored in Unicode
   *  normal form C, as keys use it (lib/sdk/keys.ts): two spellings of one id (an accent precomposed
   *  or combining) are one event, so they can never be two events of different workflows that derive
   *  the same keys. Control characters and lone surrogates, which no key can carry, are refused. */
  triggerId: z
    .string()
    .trim()
    .min(1)
    .max(256)
    .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), 'must not contain control characters')
    .refine((s) => !/\p{Cs}/u.test(s), 'is not well-formed Unicode (lone surrogate)')
    .transform((s) => s.normalize('NFC')),
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
    // The trigger's event, created by the first run of it. Two first runs at once both get it: the
    // insert that loses waits for the winner's commit and then finds its row (Prisma's upsert is a
    // read then a plain insert here, so the loser failed on the unique index).
    const inserted = await tx.$queryRaw<{ id: string; workflow: string }[]>`
      INSERT INTO event (id, trigger_id, workflow) VALUES (gen_random_uuid(), ${input.triggerId}, ${input.workflow})
      ON CONFLICT (trigger_id) DO NOTHING RETURNING id, workflow`;
    const event =
      inserted[0] ??
      (await tx.event.findUniqueOrThrow({
        where: { triggerId: input.triggerId },
        select: { id: true, workflow: true },
      }));
    // Another workflow's trigger: refused below, outside this transaction, so the refusal stays on
    // the trail (A4); its workflow is not named to a caller who may not see it (Z1).
    if (event.workflow !== input.workflow) return null;
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
  if (!run) {
    const why = `trigger ${input.triggerId} belongs to another workflow`;
    await auditRefusal(ctx.db, { ...refusal, chain: `workflow:${input.workflow}`, actor, why, request: ctx.request });
    throw forbidden(why, { field: 'triggerId' });
  }
  return {
    runId: run.id,
    workflow: run.workflow,
    triggerId: input.triggerId,
    status: run.status,
    createdAt: run.createdAt,
  };
}
