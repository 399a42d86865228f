import { apiRoute } from '@/lib/api/handler.ts';
import { opAttemptResponse } from '@/lib/api/operations.ts';
import { attemptParams } from '@/lib/api/params.ts';
import { attemptRecorded, attemptResponseBody } from '@/lib/api/schemas.ts';

export const dynamic = 'force-dynamic';

export const POST = apiRoute<typeof attemptResponseBody, { attemptId: string }>(
  {
    action: 'attempt.record_response',
    body: attemptResponseBody,
    params: attemptParams,
    responses: { 201: attemptRecorded },
  },
  (c) => opAttemptResponse(c, c.params.attemptId, c.body),
);
