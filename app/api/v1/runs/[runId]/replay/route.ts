import { apiRoute } from '@/lib/api/handler.ts';
import { opReplay } from '@/lib/api/operations.ts';
import { runParams } from '@/lib/api/params.ts';
import { replayAccepted, replayBlocked, replayBody } from '@/lib/api/schemas.ts';

export const dynamic = 'force-dynamic';

export const POST = apiRoute<typeof replayBody, { runId: string }>(
  {
    action: 'run.replay_request',
    body: replayBody,
    params: runParams,
    responses: { 202: replayAccepted, 409: replayBlocked },
  },
  (c) => opReplay(c, c.params.runId, c.body),
);
