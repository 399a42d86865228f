import { apiRoute } from '@/lib/api/handler.ts';
import { opOutcome, opOutcomeInOneStatement } from '@/lib/api/operations.ts';
import { effectStateResponse, outcomeBody } from '@/lib/api/schemas.ts';

export const dynamic = 'force-dynamic';

export const POST = apiRoute(
  {
    action: 'effect.report',
    body: outcomeBody,
    responses: { 200: effectStateResponse },
    // The key's check, the Idempotency-Key record and the transition in one statement (Z5, Z6;
    // lib/api/outcome-statement.ts); the usual way when it writes nothing.
    oneStatement: (c, caller, idempotency) => opOutcomeInOneStatement(c.db, c.meta, c.body, caller, idempotency),
  },
  (c) => opOutcome(c, c.body),
);
