import { docsHtml } from '@/lib/api/docs-page.ts';

export const dynamic = 'force-static';

export function GET(): Response {
  return new Response(docsHtml(), {
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'public, max-age=300' },
  });
}
