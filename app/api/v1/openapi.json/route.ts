import { openApiDocument } from '@/lib/api/openapi.ts';

export const dynamic = 'force-static';

export function GET(): Response {
  return Response.json(openApiDocument(), { headers: { 'cache-control': 'public, max-age=300' } });
}
