import { apiRoute } from '@/lib/api/handler.ts';
import { opClaim, opStartPeekClaim } from '@/lib/api/operations.ts';
import { claimBody, claimLost, claimWon } from '@/lib/api/schemas.ts';

export const dynamic = 'force-dynamic';

export const POST = apiRoute(
  {
    action: 'effect.claim',
    body: claimBody,
    responses: { 201: claimWon, 200: claimLost },
    // A replayed claim of a held key changes nothing: answered from the statement that authenticates
    // it, which also stores its Idempotency-Key record (Z5; lib/api/held-claim.ts).
    readOnlyAnswer: (c) => opStartPeekClaim(c.db, c.body),
  },
  (c) => opClaim(c, c.body),
);
