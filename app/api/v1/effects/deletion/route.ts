import { apiRoute } from '@/lib/api/handler.ts';
import { opDeletion } from '@/lib/api/operations.ts';
import { deletionBody, deletionResponse } from '@/lib/api/schemas.ts';

export const dynamic = 'force-dynamic';

export const POST = apiRoute(
  { action: 'effect.revoke_deletion', body: deletionBody, responses: { 200: deletionResponse } },
  (c) => opDeletion(c, c.body),
);
