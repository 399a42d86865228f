import { apiRoute } from '@/lib/api/handler.ts';
import { opReadEffect } from '@/lib/api/operations.ts';
import { effectParams } from '@/lib/api/params.ts';
import { effectViewResponse } from '@/lib/api/schemas.ts';

export const dynamic = 'force-dynamic';

// The key is one percent-encoded path segment; the router hands it over decoded.
export const GET = apiRoute<undefined, { key: string }>(
  { action: 'effect.read', params: effectParams, responses: { 200: effectViewResponse } },
  (c) => opReadEffect(c, c.params.key),
);
