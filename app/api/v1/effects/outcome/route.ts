import { apiRoute } from '@/lib/api/handler.ts';
import { opOutcome } from '@/lib/api/operations.ts';
import { effectStateResponse, outcomeBody } from '@/lib/api/schemas.ts';

export const dynamic = 'force-dynamic';

export const POST = apiRoute(
  { action: 'effect.report', body: outcomeBody, responses: { 200: effectStateResponse } },
  (c) => opOutcome(c, c.body),
);
