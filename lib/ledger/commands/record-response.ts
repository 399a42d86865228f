// Stores the provider's full raw response with the attempt (R1) before anything parses it:
// status, header pairs in order, and the body bytes as received. Written once per attempt.
import { z } from 'zod';
import { sqlRows } from '@/lib/db/client.ts';
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

export const recordResponseInput = rawResponseInput.extend({ attemptId: z.uuid() });

/** A provider's raw response as the ledger stores it: status, header pairs in order, body bytes. */
export interface RawResponseRecord {
  status: number;
  headers: [string, string][];
  body: Uint8Array;
}

/** The write of R1, also made inside transitionEffect's statement: placeholders for the attempt id,
 *  status (nothing is written when it is null), headers (JSON text) and body. A response already
 *  stored is kept. */
export function storeResponseSql(attemptId: string, status: string, headers: string, body: string): string {
  return `UPDATE attempt SET response_status = ${status}, response_headers = ${headers}::jsonb, response_body = ${body}, responded_at = now()
     WHERE id = ${attemptId}::uuid AND ${status}::int IS NOT NULL AND responded_at IS NULL`;
}

/** The values for storeResponseSql's placeholders after the attempt id. */
export function responseValues(response: RawResponseRecord | null | undefined): unknown[] {
  return response
    ? [response.status, JSON.stringify(response.headers), Buffer.from(response.body)]
    : [null, null, null];
}

const RECORD_SQL = `${storeResponseSql('$1', '$2', '$3', '$4')} RETURNING id`;

export interface RecordResponseOptions {
  /** The caller repeats a write whose reply was lost (a database outage): a response already stored
   *  is kept and answered as recorded, instead of a conflict. */
  keepEarlier?: boolean;
}

export async function recordResponse(
  ctx: CommandContext,
  raw: unknown,
  options: RecordResponseOptions = {},
): Promise<{ attemptId: string; bytes: number }> {
  const input = parseInput(recordResponseInput, raw);
  const { db, actor } = ctx;
  if (actor.kind !== 'runtime' && actor.kind !== 'executor')
    throw forbidden('only the runtime or replay executor that made the call records its response');
  if (actor.kind === 'runtime') {
    // Z6: the attempt's run must be one of the runtime key's workflows.
    const attempt = await db.attempt.findUnique({ where: { id: input.attemptId }, select: { runId: true } });
    if (!attempt) throw notFound(`attempt ${input.attemptId} does not exist`, { field: 'attemptId' });
    await requireWorkflowScope(ctx, (await getRun(db, attempt.runId)).workflow, {
      action: 'attempt.record_response',
      subjectType: 'run',
      subjectId: attempt.runId,
      runId: attempt.runId,
    });
  }
  const stored = await sqlRows(db, RECORD_SQL, [input.attemptId, ...responseValues(input)], 'ledger_record_response');
  if (stored.length === 0) {
    const [attempt] = await sqlRows(db, 'SELECT 1 FROM attempt WHERE id = $1::uuid', [input.attemptId]);
    if (!attempt) throw notFound(`attempt ${input.attemptId} does not exist`, { field: 'attemptId' });
    if (!options.keepEarlier) throw conflict(`attempt ${input.attemptId} already has its response recorded`);
  }
  return { attemptId: input.attemptId, bytes: input.body.byteLength };
}
