import { apiRoute } from '@/lib/api/handler.ts';
import { opClaim } from '@/lib/api/operations.ts';
import { claimBody, claimLost, claimWon } from '@/lib/api/schemas.ts';

export const dynamic = 'force-dynamic';

export const POST = apiRoute(
  { action: 'effect.claim', body: claimBody, responses: { 201: claimWon, 200: claimLost } },
  (c) => opClaim(c, c.body),
);
