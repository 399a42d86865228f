import { apiRoute } from '@/lib/api/handler.ts';
import { cosignatureBody, cosignatureResponse } from '@/lib/api/tree-schemas.ts';
import { submitConfiguredCosignature } from '@/lib/audit/tree/api.ts';

export const dynamic = 'force-dynamic';

export const POST = apiRoute(
  { action: 'audit.tree_cosign', body: cosignatureBody, responses: { 201: cosignatureResponse } },
  async (c) => ({ status: 201, body: await submitConfiguredCosignature(c.db, c.body.note, c.actor, c.meta) }),
);
