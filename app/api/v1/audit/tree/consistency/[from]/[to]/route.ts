import { apiRoute } from '@/lib/api/handler.ts';
import { consistencyParams, consistencyResponse } from '@/lib/api/tree-schemas.ts';
import { treeConsistency } from '@/lib/audit/tree/api.ts';

export const dynamic = 'force-dynamic';

export const GET = apiRoute<undefined, { from: number; to: number }>(
  { action: 'audit.tree_read', params: consistencyParams, responses: { 200: consistencyResponse } },
  async (c) => ({ status: 200, body: await treeConsistency(c.db, c.params.from, c.params.to) }),
);
