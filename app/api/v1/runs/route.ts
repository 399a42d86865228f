import { apiRoute } from '@/lib/api/handler.ts';
import { opCreateRun } from '@/lib/api/operations.ts';
import { createRunBody, createRunResponse } from '@/lib/api/schemas.ts';

export const dynamic = 'force-dynamic';

export const POST = apiRoute(
  { action: 'run.create', body: createRunBody, responses: { 201: createRunResponse } },
  (c) => opCreateRun(c, c.body),
);
