// Stores the provider's full raw response with the attempt (R1) before anything parses it:
// status, header pairs in order, and the body bytes as received. Written once per attempt.
import { z } from 'zod';
import { requireWorkflowScope } from '../scope.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import { getRun } from '../catalog.ts';
import { parseInput } from '../validate.ts';
import type { CommandContext } from './common.ts';

/** A provider's raw response as received (R1): status, header pairs in order, body bytes. */
export const rawResponseInput = z.strictObject({
  status: z.number().int().min(0).max(999),
  headers: z.array(z.tuple([z.string().max(1024), z.string().max(16384)])).max(500),
  body: z.instanceof(Uint8Array),
});
export type RawResponseInput = z.output<typeof rawResponseInput>;

export const recordResponseInput = rawResponseInput.extend({ attemptId: z.uuid() });

export async function recordResponse(ctx: CommandContext, raw: unknown): Promise<{ attemptId: string; bytes: number }> {
  const input = parseInput(recordResponseInput, raw);
  const { db, actor } = ctx;
  if (actor.kind !== 'runtime' && actor.kind !== 'executor')
    throw forbidden('only the runtime or replay executor that made the call records its response');
  const attempt = await db.attempt.findUnique({ where: { id: input.attemptId }, select: { runId: true } });
  if (!attempt) throw notFound(`attempt ${input.attemptId} does not exist`, { field: 'attemptId' });
  await requireWorkflowScope(ctx, (await getRun(db, attempt.runId)).workflow, {
    action: 'attempt.record_response',
    subjectType: 'run',
    subjectId: attempt.runId,
    runId: attempt.runId,
  });
  const updated = await db.attempt.updateMany({
    where: { id: input.attemptId, respondedAt: null },
    data: {
      responseStatus: input.status,
      responseHeaders: input.headers,
      responseBody: Buffer.from(input.body),
      respondedAt: new Date(),
    },
  });
  if (updated.count === 0) throw conflict(`attempt ${input.attemptId} already has its response recorded`);
  return { attemptId: input.attemptId, bytes: input.body.byteLength };
}
