import { apiRoute } from '@/lib/api/handler.ts';
import { opReadRun } from '@/lib/api/operations.ts';
import { runParams } from '@/lib/api/params.ts';
import { runViewResponse } from '@/lib/api/schemas.ts';

export const dynamic = 'force-dynamic';

export const GET = apiRoute<undefined, { runId: string }>(
  { action: 'run.read', params: runParams, responses: { 200: runViewResponse } },
  (c) => opReadRun(c, c.params.runId),
);
