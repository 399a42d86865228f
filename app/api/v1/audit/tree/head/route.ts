import { apiRoute } from '@/lib/api/handler.ts';
import { treeHeadResponse } from '@/lib/api/tree-schemas.ts';
import { newestHead } from '@/lib/audit/tree/api.ts';
import { treeSignerFrom } from '@/lib/audit/tree/config.ts';
import { env } from '@/lib/env.ts';

export const dynamic = 'force-dynamic';

export const GET = apiRoute({ action: 'audit.tree_read', responses: { 200: treeHeadResponse } }, async (c) => {
  const signer = treeSignerFrom(env());
  return { status: 200, body: await newestHead(c.db, 'missing' in signer ? null : signer) };
});
