import { apiRoute } from '@/lib/api/handler.ts';
import { opSubmitPlan } from '@/lib/api/operations.ts';
import { runParams } from '@/lib/api/params.ts';
import { submitPlanBody, submitPlanResponse } from '@/lib/api/schemas.ts';

export const dynamic = 'force-dynamic';

export const POST = apiRoute<typeof submitPlanBody, { runId: string }>(
  { action: 'plan.submit', body: submitPlanBody, params: runParams, responses: { 201: submitPlanResponse } },
  (c) => opSubmitPlan(c, c.params.runId, c.body),
);
