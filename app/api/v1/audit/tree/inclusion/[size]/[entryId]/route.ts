import { apiRoute } from '@/lib/api/handler.ts';
import { inclusionParams, inclusionResponse } from '@/lib/api/tree-schemas.ts';
import { entryInclusion } from '@/lib/audit/tree/api.ts';

export const dynamic = 'force-dynamic';

export const GET = apiRoute<undefined, { size: number; entryId: number }>(
  { action: 'audit.tree_read', params: inclusionParams, responses: { 200: inclusionResponse } },
  async (c) => ({ status: 200, body: await entryInclusion(c.db, c.params.size, c.params.entryId) }),
);
